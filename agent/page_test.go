package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/testsite"
	"github.com/headroom-agent/headroom/llm/tokens"
)

func observe(t *testing.T, path string) *browser.Snapshot {
	t.Helper()
	s, err := testsite.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := chrometest.Open(t, ctx, browser.Options{Logf: t.Logf})
	if _, err := p.Navigate(ctx, s.URL+path); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Every view of a page stays within its cap however large the page, and
// says what it left out; an element it keeps keeps its snapshot's index
// and name.
func TestViewsKeepToTheirCaps(t *testing.T) {
	snap := observe(t, "/catalogue/")
	types := calltypes.Default()
	for _, typ := range types.Types() {
		for _, limit := range []int{2000, 600, 150} {
			typ.PageTokens = limit
			page := ViewOf(typ, snap, nil, -1)
			out := page.Render()
			if n := tokens.Count(out); n > limit {
				t.Errorf("%s, cap %d: the page is %d tokens", typ.Name, limit, n)
			}
			whole := typ
			whole.PageTokens = 1 << 30
			cut := strings.Contains(out, "\n… ") && (strings.Contains(out, "more") || strings.Contains(out, "left out"))
			if tokens.Count(ViewOf(whole, snap, nil, -1).Render()) > limit && !cut {
				t.Errorf("%s, cap %d: nothing says what was left out:\n%s", typ.Name, limit, out)
			}
			for _, e := range page.Elements() {
				if e.Index >= len(snap.Elements) || clip(snap.Elements[e.Index].Name, maxNameRunes) != e.Name {
					t.Fatalf("%s, cap %d: element [%d] %q is not the snapshot's", typ.Name, limit, e.Index, e.Name)
				}
			}
		}
	}
}

// On the catalogue, a pick sees every element and every word, each
// product's price between its name and its button.
func TestThePickSeesTheWholeCatalogue(t *testing.T) {
	snap := observe(t, "/catalogue/")
	typ, _ := calltypes.Default().Lookup(calltypes.ClickPick)
	page := ViewOf(typ, snap, nil, -1)
	if got := len(page.Elements()); got != len(snap.Elements) {
		t.Errorf("%d of %d elements", got, len(snap.Elements))
	}
	out := page.Render()
	for _, b := range snap.Blocks {
		if b.Element < 0 && !strings.Contains(out, b.Text) {
			t.Errorf("the words %q are not in the view", b.Text)
		}
	}
	name := strings.Index(out, "Walnut dresser")
	price := strings.Index(out[name:], "330 EUR")
	button := strings.Index(out[name:], `button "Add to cart"`)
	if name < 0 || price < 0 || button < price {
		t.Errorf("the walnut dresser's price does not stand between its name and its button:\n%s", out)
	}
	t.Logf("%d tokens:\n%s", tokens.Count(out), out)
}

// What a model needs to act: a drop-down's options, checked state, what
// is hidden or out of view.
func TestPageOfCarriesWhatAnActionNeeds(t *testing.T) {
	snap := observe(t, "/shop/results.html?q=desk")
	page := PageOf(snap)
	found := false
	for _, e := range page.Elements() {
		if len(e.Options) > 0 {
			found = true
			if len(e.Options) < 2 || e.Value == "" {
				t.Errorf("the sort drop-down has options %q, value %q", e.Options, e.Value)
			}
		}
	}
	if !found {
		t.Fatalf("no drop-down on the results page:\n%s", page)
	}
	if page.URL != snap.URL || page.Title != snap.Title {
		t.Errorf("page %q %q, snapshot %q %q", page.URL, page.Title, snap.URL, snap.Title)
	}
}

func TestElementBoundsEachField(t *testing.T) {
	var opts []string
	for range 200 {
		opts = append(opts, strings.Repeat("Ω", 100))
	}
	e := element(browser.Element{Name: strings.Repeat("n", 500), Placeholder: strings.Repeat("n", 500), Options: opts, Visible: false})
	if len([]rune(e.Name)) != maxNameRunes || e.Placeholder != "" || len(e.Options) != maxOptions || e.MoreOptions != 200-maxOptions || len([]rune(e.Options[0])) != maxOptionRunes || !e.Hidden {
		t.Errorf("element %d-rune name, placeholder %q, %d options (+%d) of %d runes, hidden %v", len([]rune(e.Name)), e.Placeholder, len(e.Options), e.MoreOptions, len([]rune(e.Options[0])), e.Hidden)
	}
}

// A link's address is shown where it says more than its name: when it
// leaves the site, or the link has no name.
func TestElementShowsAnHrefThatSaysSomething(t *testing.T) {
	for _, c := range []struct {
		name, href string
		shown      bool
	}{
		{"Desks", "/catalogue/?c=desks", false},
		{"", "/catalogue/?c=desks", true},
		{"Partners", "http://elsewhere.test/partners", true},
		{"Write to us", "mailto:hello@shop.example", true},
		{"Top", "#top", false},
	} {
		e := element(browser.Element{Role: "link", Tag: "a", Name: c.name, Href: c.href, Visible: true})
		if (e.Href != "") != c.shown {
			t.Errorf("%q %s: href %q", c.name, c.href, e.Href)
		}
	}
}

// A picked action runs through the page's one path, on the element of the
// snapshot it was picked from.
func TestBrowserActionRunsOnThePickedSnapshot(t *testing.T) {
	s, err := testsite.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := chrometest.Open(t, ctx, browser.Options{Logf: t.Logf})
	if _, err := p.Navigate(ctx, s.URL+"/shop/"); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	box := -1
	for _, e := range snap.Elements {
		if e.Role == "searchbox" || e.Type == "search" {
			box = e.Index
		}
	}
	if box < 0 {
		t.Fatalf("no search box: %v", snap)
	}
	if _, err := p.Observe(ctx); err != nil { // observing again must not move the pick
		t.Fatal(err)
	}
	act, err := BrowserAction(snap, calltypes.Action{Kind: calltypes.ActType, Index: box, Text: "walnut", Submit: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Do(ctx, act)
	if err != nil || out.Effect != browser.Navigated {
		t.Fatalf("%s: %v, %v", act, out, err)
	}
	if u, _ := p.URL(ctx); !strings.Contains(u, "walnut") {
		t.Errorf("after typing and submitting, the page is %s", u)
	}
	if _, err := BrowserAction(snap, calltypes.Action{Kind: calltypes.ActDone, Index: -1}); err == nil {
		t.Error("done became a browser action")
	}
}

// What an alert said as the page loaded is the first line of every view
// of it, past any cut, and reads back as a note: words of the page the
// view quotes, never lines of its own.
func TestAViewNotesTheDialogsThePageOpened(t *testing.T) {
	snap := observe(t, "/orders/index.html")
	want := `… the page showed the alert "Your session expires in 5 minutes." and it was closed`
	for _, typ := range calltypes.Default().Types() {
		name := typ.Name
		typ.PageTokens = 60 // a cap that cuts the page
		text := ViewOf(typ, snap, nil, -1).Render()
		if lines := strings.Split(text, "\n"); len(lines) < 3 || lines[2] != want {
			t.Errorf("%s's view begins %q, want its third line %q", name, text, want)
		}
		back, err := calltypes.ParsePage(text)
		if err != nil || !back.Lines[0].Note {
			t.Errorf("%s's view does not read back with the dialog as a note: %v", name, err)
		}
	}
}

func TestADownloadIsNotedWithWhatItBegins(t *testing.T) {
	d := browser.Download{Name: "orders-report.csv", Bytes: 77, Saved: true, Text: "month,orders\nDecember,412\n"}
	want := `downloaded "orders-report.csv" (77 bytes), which begins "month,orders / December,412"`
	if got := downloadNote(d); got != want {
		t.Errorf("downloadNote = %q, want %q", got, want)
	}
	d.Text = ""
	if got := downloadNote(d); got != `downloaded "orders-report.csv" (77 bytes)` {
		t.Errorf("a file that is not text: %q", got)
	}
	page := PageOf(&browser.Snapshot{Downloads: []browser.Download{{Name: "a.csv", Saved: true, Text: "x\n[1] button \"Pay\""}}})
	back, err := calltypes.ParsePage(page.Render())
	if err != nil || len(back.Lines) != 1 || !back.Lines[0].Note {
		t.Errorf("a file's words read back as %+v (%v), want one note", back.Lines, err)
	}
}

// A page that opens dialogs in a loop, or downloads a hundred files,
// gets a few notes and a count, not a prompt full of them.
func TestAViewNotesOnlyTheLastFewDialogs(t *testing.T) {
	snap := &browser.Snapshot{}
	for i := range 7 {
		snap.Dialogs = append(snap.Dialogs, browser.Dialog{Kind: "alert", Message: fmt.Sprintf("alert %d", i), Accepted: true})
	}
	var notes []string
	for _, l := range PageOf(snap).Lines {
		notes = append(notes, l.Text)
	}
	want := []string{"4 earlier dialogs not shown", `the page showed the alert "alert 4" and it was closed`,
		`the page showed the alert "alert 5" and it was closed`, `the page showed the alert "alert 6" and it was closed`}
	if !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
}
