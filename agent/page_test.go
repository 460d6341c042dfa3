package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
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
	p, err := browser.Open(ctx, browser.Options{Logf: t.Logf})
	if err != nil {
		t.Skipf("no browser: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	if _, err := p.Navigate(ctx, s.URL+path); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// The page a prompt carries stays within its cap however large the page,
// is cut as the rendering is (text, then elements from the end), and says
// what it left out.
func TestPageOfIsBoundedByConstruction(t *testing.T) {
	snap := observe(t, "/catalogue/")
	full, _ := json.Marshal(convert(snap, browser.Cut{}))
	if tokens.Count(string(full)) <= 2000 {
		t.Fatalf("the catalogue is only %d tokens as JSON: too small to test the cap", tokens.Count(string(full)))
	}
	for _, limit := range []int{2000, 600, 150} {
		page := PageOf(snap, PageOptions{MaxTokens: limit})
		b, _ := json.Marshal(page)
		if n := tokens.Count(string(b)); n > limit {
			t.Errorf("cap %d: the page is %d tokens", limit, n)
		}
		if page.Cut == "" || !strings.Contains(page.Cut, "more") {
			t.Errorf("cap %d: cut %q says nothing of what was left out", limit, page.Cut)
		}
		for i, e := range page.Elements {
			if e.Index != snap.Elements[i].Index {
				t.Fatalf("cap %d: element %d has index %d, the snapshot's is %d", limit, i, e.Index, snap.Elements[i].Index)
			}
		}
		if limit == 2000 && page.Text != "" {
			t.Errorf("cap 2000: elements were cut (%s) but text kept", page.Cut)
		}
	}
}

// What a model needs to act: a drop-down's options, checked state, what
// is hidden or out of view.
func TestPageOfCarriesWhatAnActionNeeds(t *testing.T) {
	snap := observe(t, "/shop/results.html?q=desk")
	page := PageOf(snap, PageOptions{})
	if page.Cut != "" {
		t.Errorf("a small page was cut: %s", page.Cut)
	}
	found := false
	for _, e := range page.Elements {
		if e.Tag == "select" {
			found = true
			if len(e.Options) < 2 {
				t.Errorf("the sort drop-down has options %q", e.Options)
			}
		}
	}
	if !found {
		t.Fatalf("no drop-down on the results page: %+v", page.Elements)
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
	if len([]rune(e.Name)) != maxNameRunes || e.Placeholder != "" || len(e.Options) != maxOptions || len([]rune(e.Options[0])) != maxOptionRunes || !e.Hidden {
		t.Errorf("element %d-rune name, placeholder %q, %d options of %d runes, hidden %v", len([]rune(e.Name)), e.Placeholder, len(e.Options), len([]rune(e.Options[0])), e.Hidden)
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
	p, err := browser.Open(ctx, browser.Options{Logf: t.Logf})
	if err != nil {
		t.Skipf("no browser: %v", err)
	}
	defer p.Close()
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
