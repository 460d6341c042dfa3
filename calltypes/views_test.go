package calltypes

import (
	"strings"
	"testing"
)

func cartPage(button, count string) Page {
	return MustParsePage(`url: https://shop.example/
title: Shop
[0] link "Home"
[1] link "cart ` + count + `"
# Furniture
[2] checkbox "Walnut" checked
4 pieces
### [3] link "Walnut dresser"
(301) 330 EUR
[4] button "` + button + `"
### [5] link "Walnut cabinet"
(108) 240 EUR
[6] button "Add to cart"
### [7] link "Walnut bench"
(12) 410 EUR
[8] button "Add to cart"
[9] link "1"
[10] link "2"
© 2026 Shop`)
}

// After an action on the same page, a check reads what changed, marked,
// and the lines around the element acted on; the rest is one note.
func TestTheChangesViewShowsWhatTheActionDid(t *testing.T) {
	before, now := cartPage("Add to cart", "0"), cartPage("Added", "1")
	got := ViewChanges.Look(now, &before, 4, 500, nil).Render()
	for _, want := range []string{`+ [1] link "cart 1"`, `+ [4] button "Added"`, "(301) 330 EUR", `### [3] link "Walnut dresser"`, "lines as before"} {
		if !strings.Contains(got, want) {
			t.Errorf("the view lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `+ [9] link "1"`) || strings.Contains(got, "© 2026") {
		t.Errorf("an unchanged line far from the action is shown, or marked:\n%s", got)
	}
	if got == now.Render() {
		t.Error("the changes view is the whole page")
	}
	// Within a cap too small for it all, the acted element stays.
	small := ViewChanges.Look(now, &before, 4, 40, nil).Render()
	if !strings.Contains(small, `[4] button "Added"`) || charCount(small) > 40 {
		t.Errorf("cut to 40:\n%s", small)
	}
	// Nothing changed: it says so.
	same := ViewChanges.Look(before, &before, -1, 500, nil).Render()
	if !strings.Contains(same, "nothing on the page changed") {
		t.Errorf("nothing changed:\n%s", same)
	}
}

// With no action, or after going to another page, a check reads the
// page's words; so does a summary, each item of a list on one line.
func TestTheWordsView(t *testing.T) {
	p := cartPage("Add to cart", "0")
	for i := range p.Lines { // the cards are items of one list
		if i >= 5 && i <= 13 {
			p.Lines[i].List, p.Lines[i].Item = 1, 1+(i-5)/3
		}
	}
	words := ViewWords.Look(p, nil, -1, 500, nil).Render()
	if !strings.Contains(words, "\nWalnut dresser (301) 330 EUR Add to cart\n") || strings.Contains(words, "[4]") {
		t.Errorf("words:\n%s", words)
	}
	other := p
	other.URL = "https://shop.example/cart"
	if got := ViewChanges.Look(p, &other, 4, 500, nil).Render(); got != words {
		t.Errorf("after going to another page, a check reads the words, not:\n%s", got)
	}
	if got := ViewPage.Look(p, nil, -1, 500, nil).Render(); !strings.Contains(got, "### [3] link \"Walnut dresser\"\n(301) 330 EUR\n[4] button") {
		t.Errorf("the page view:\n%s", got)
	}
}

func TestATypesViewAndPageCapAreItsOwn(t *testing.T) {
	r := Default()
	for name, want := range map[string]struct {
		view View
		cap  int
	}{Planning: {ViewPage, 1000}, ClickPick: {ViewPage, 2000}, YesNo: {ViewChanges, 500}, Summarize: {ViewWords, 2000}} {
		typ, _ := r.Lookup(name)
		if typ.View != want.view || typ.PageTokens != want.cap || typ.Message == nil {
			t.Errorf("%s: view %q, page_tokens %d", name, typ.View, typ.PageTokens)
		}
	}
	if err := r.Override(YesNo, Override{View: ViewPage, PageTokens: 800}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := r.Lookup(YesNo); typ.View != ViewPage || typ.PageTokens != 800 || typ.MaxTokens != yesNoCap {
		t.Errorf("overridden: %+v", typ)
	}
	for _, o := range []Override{{View: "screenshot"}, {PageTokens: -1}, {PageTokens: 50}} {
		if err := r.Override(ClickPick, o); err == nil {
			t.Errorf("%+v was taken", o)
		}
	}
	if err := r.Define("extract", Override{MaxTokens: 100, System: "x", Schema: object(nil), View: ViewPage}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := r.Lookup("extract"); typ.View != ViewPage || typ.PageTokens != DefaultPageTokens || typ.Message != nil {
		t.Errorf("a defined type: view %q, page_tokens %d", typ.View, typ.PageTokens)
	}
}
