package calltypes

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A page as a person reads it: its lines in order, each element with
// only what says something of it.
var shopPage = Page{
	URL: "https://shop.example/catalogue/", Title: "All furniture",
	Lines: []Line{
		{Element: &Element{Index: 0, Role: "link", Name: "Oak and Iron home"}},
		{Element: &Element{Index: 1, Role: "searchbox", Name: "Search", Placeholder: "Search 1,200 pieces"}},
		{Text: "All furniture", Heading: 1},
		{Element: &Element{Index: 2, Role: "checkbox", Name: "Walnut", Checked: true}},
		{Element: &Element{Index: 3, Role: "combobox", Name: "Sort", Value: "Featured", Options: []string{"Featured", "Price, low to high"}, MoreOptions: 3}},
		{Element: &Element{Index: 4, Role: "link", Name: "Walnut dresser"}, Heading: 3},
		{Text: "(301) 330 EUR"},
		{Element: &Element{Index: 5, Role: "button", Name: "Add to cart", Disabled: true}},
		{Element: &Element{Index: 6, Role: "textbox", Name: "Email", Type: "email"}, Offscreen: true},
		{Element: &Element{Index: 7, Role: "link", Name: "Partners", Href: "http://elsewhere.test/partners"}, Offscreen: true},
		{Text: "[1] A footnote that looks like an element", Offscreen: true},
		{Text: "# not a heading", Offscreen: true},
		{Text: "… nor a note", Offscreen: true},
		{Element: &Element{Index: 8, Role: "clickable", Name: `Say "hi"`, Hidden: true}, Changed: true, Offscreen: true},
		{Text: "41 more elements and 230 words below: scroll down", Note: true},
	},
}

const shopPageText = `url: https://shop.example/catalogue/
title: All furniture
[0] link "Oak and Iron home"
[1] searchbox "Search" placeholder="Search 1,200 pieces"
# All furniture
[2] checkbox "Walnut" checked
[3] combobox "Sort" value="Featured" options="Featured","Price, low to high" +3 more
### [4] link "Walnut dresser"
(301) 330 EUR
[5] button "Add to cart" disabled
… out of view
[6] textbox "Email" type=email
[7] link "Partners" href=http://elsewhere.test/partners
\[1] A footnote that looks like an element
\# not a heading
\… nor a note
+ [8] clickable "Say \"hi\"" hidden
… 41 more elements and 230 words below: scroll down`

func TestPageRendersAsItReads(t *testing.T) {
	if got := shopPage.Render(); got != shopPageText {
		t.Fatalf("got\n%s\nwant\n%s", got, shopPageText)
	}
	back, err := ParsePage(shopPageText)
	if err != nil {
		t.Fatal(err)
	}
	if back.Render() != shopPageText {
		t.Errorf("read back, it renders\n%s", back.Render())
	}
	if len(back.Elements()) != 9 || !back.Lines[8].Offscreen || back.Lines[10].Text != "[1] A footnote that looks like an element" || !back.Lines[13].Changed {
		t.Errorf("read back as %+v", back.Lines)
	}
	e, ok := back.Element(3)
	if !ok || e.Value != "Featured" || len(e.Options) != 2 || e.MoreOptions != 3 {
		t.Errorf("the sort drop-down read back as %+v", e)
	}
}

// In a call's JSON input a page is its written form, and only that.
func TestPageInJSONIsItsText(t *testing.T) {
	b, err := json.Marshal(PickInput{Goal: "g", Page: shopPage})
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Page string }
	if err := json.Unmarshal(b, &s); err != nil || s.Page != shopPageText {
		t.Fatalf("the page in JSON is %q (%v)", s.Page, err)
	}
	var in PickInput
	if err := json.Unmarshal(b, &in); err != nil || in.Page.Render() != shopPageText {
		t.Fatalf("read back: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"goal":"g","page":{"url":"x"}}`), &in); err == nil {
		t.Error("a page given as an object was taken")
	}
}

func TestParsePageNamesTheLineAtFault(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"title: x", "page line 1: want \"url: \""},
		{"url: x", "page line 2: want \"title: \""},
		{"url: x\ntitle: y\n[3]", "page line 3: [3] wants a role"},
		{"url: x\ntitle: y\nok\n[3] button \"Go", "page line 4: [3]'s name"},
		{"url: x\ntitle: y\n[3] button \"Go\" shiny", `page line 3: [3]: "shiny" is not an attribute`},
		{"url: x\ntitle: y\n[3] combobox options=\"a\" +x more", "page line 3: [3]'s options"},
		{"url: x\ntitle: y\n… ", "page line 3: a note says nothing"},
		{"url: x\ntitle: y\n\n", "page line 3: the line is empty"},
	} {
		_, err := ParsePage(c.text)
		var pe *PageError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// Whatever a page's text holds, what reads renders back the same, and
// nothing panics.
func FuzzParsePage(f *testing.F) {
	f.Add(shopPageText)
	f.Add("url: \ntitle: ")
	f.Add("url: a\ntitle: b\n+ ### [1] link \"x\" href=\"a b\" options=\"1\",\"2\" +4 more checked")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePage(s)
		if err != nil {
			return
		}
		out := p.Render()
		q, err := ParsePage(out)
		if err != nil {
			t.Fatalf("%q rendered as %q, which does not read: %v", s, out, err)
		}
		if again := q.Render(); again != out {
			t.Fatalf("%q renders %q, then %q", s, out, again)
		}
	})
}
