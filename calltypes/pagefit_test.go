package calltypes

import (
	"fmt"
	"strings"
	"testing"
)

// longPage is a page of a header, a grid of like items and a footer that
// repeats the header's links, 40 px a line, its viewport the first 400 px.
func longPage(products int) Page {
	p := Page{URL: "https://shop.example/", Title: "Shop", Viewport: [2]float64{0, 400}}
	y := 0.0
	add := func(l Line) {
		l.Top, l.Bottom, l.Offscreen = y, y+30, y >= 400
		y += 40
		p.Lines = append(p.Lines, l)
	}
	i := 0
	el := func(role, name string) *Element {
		i++
		return &Element{Index: i - 1, Role: role, Name: name}
	}
	for _, n := range []string{"Desks", "Tables", "Chairs", "Beds"} {
		add(Line{Element: el("link", n), List: 1, Item: len(p.Lines) + 1})
	}
	add(Line{Text: "Furniture", Heading: 1})
	for k := range products {
		add(Line{Element: el("link", fmt.Sprintf("Desk %d", k)), Heading: 3, List: 2, Item: 100 + k})
		add(Line{Text: fmt.Sprintf("%d EUR", 100+k), List: 2, Item: 100 + k})
		add(Line{Element: el("button", "Add to cart"), List: 2, Item: 100 + k})
	}
	for _, n := range []string{"Desks", "Tables", "Chairs", "Beds"} {
		add(Line{Element: el("link", n), List: 3, Item: 200 + len(p.Lines)})
	}
	add(Line{Text: "© 2026 Shop. Made in Porto."})
	return p
}

// charCount measures tokens as four characters, the default.
func charCount(s string) int { return (len([]rune(s)) + 3) / 4 }

func TestFitKeepsAPageThatFits(t *testing.T) {
	p := longPage(3)
	if got := p.Fit(1<<20, nil); got.Render() != p.compact().Render() && got.Render() != p.Render() {
		t.Errorf("a page within its cap was cut:\n%s", got.Render())
	}
}

// Cut to a cap, a page keeps its viewport, then what is nearest it; a
// footer repeating the header goes first; an item goes whole; and a note
// says what went and where.
func TestFitCutsByDistanceFromTheViewport(t *testing.T) {
	p := longPage(30)
	full := charCount(p.Render())
	for _, max := range []int{full * 3 / 4, full / 2, full / 4, 60} {
		got := p.Fit(max, charCount)
		out := got.Render()
		if n := charCount(out); n > max {
			t.Errorf("cap %d: %d tokens", max, n)
		}
		if !strings.Contains(out, "[0] link \"Desks\"") {
			t.Errorf("cap %d: the viewport's first line is gone:\n%s", max, out)
		}
		if max < full && !strings.Contains(out, "below: scroll down") {
			t.Errorf("cap %d: no note says what is below:\n%s", max, out)
		}
		for _, l := range got.Lines {
			if l.Element != nil && l.Element.Name == "Add to cart" && l.Item >= 100 && !strings.Contains(out, fmt.Sprintf("%d EUR", l.Item)) {
				t.Errorf("cap %d: the button of item %d kept without its price", max, l.Item)
			}
		}
	}
	// Room for all but the footer: the repeated links go, as one note.
	withoutFooter := p
	withoutFooter.Lines = p.Lines[:len(p.Lines)-5]
	got := p.Fit(charCount(withoutFooter.Render())+20, charCount).Render()
	if !strings.Contains(got, "links repeating links above") || !strings.Contains(got, "Desk 29") || !strings.Contains(got, "© 2026") {
		t.Errorf("the footer's copy of the links should go first, and only it:\n%s", got)
	}
	// Half the page: the grid is cut at an item, and its note says so.
	half := p.Fit(full/2, charCount).Render()
	if !strings.Contains(half, "more items like these") {
		t.Errorf("the note does not say the grid goes on:\n%s", half)
	}
}

// A viewport in the middle of the page keeps what is above it and below
// it, nearest first, and says which way to scroll for each.
func TestFitAroundAViewportFurtherDown(t *testing.T) {
	p := longPage(30)
	p.Viewport = [2]float64{1600, 2000}
	for i := range p.Lines {
		l := &p.Lines[i]
		l.Offscreen = l.Bottom <= 1600 || l.Top >= 2000
	}
	out := p.Fit(charCount(p.Render())/3, charCount).Render()
	if !strings.Contains(out, "above: scroll up") || !strings.Contains(out, "below: scroll down") {
		t.Errorf("want notes above and below:\n%s", out)
	}
	if !strings.Contains(out, "Desk 13") {
		t.Errorf("the viewport's items are gone:\n%s", out)
	}
}

// A paragraph that would take the page's whole cap is cut short.
func TestFitClipsALongParagraph(t *testing.T) {
	p := Page{URL: "u", Title: "t", Viewport: [2]float64{0, 400}, Lines: []Line{
		{Text: strings.Repeat("word ", 400), Bottom: 30},
		{Element: &Element{Index: 0, Role: "button", Name: "Next"}, Top: 40, Bottom: 70},
	}}
	out := p.Fit(200, charCount).Render()
	if charCount(out) > 200 || !strings.Contains(out, `[0] button "Next"`) || !strings.Contains(out, "word word") {
		t.Errorf("cut to:\n%s", out)
	}
}
