package calltypes

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/headroom-agent/headroom/internal/plural"
)

// View is what a call type's calls read of the page, each within the
// type's page cap (PageTokens).
type View string

// The views.
const (
	// ViewPage is the whole page: every element and the words among
	// them, the viewport first when it must be cut. What a call that
	// picks an element needs.
	ViewPage View = "page"
	// ViewChanges is what the last action changed, marked new, and the
	// lines around the element it acted on (that element among them):
	// what a call that judges the action needs. With no last action, or
	// after going to another page, it is ViewWords.
	ViewChanges View = "changes"
	// ViewWords is the page's words, headings and elements' names as
	// text, with no indexes: what a call that answers from the page
	// reads.
	ViewWords View = "words"
)

// views are the views, in the order they are documented.
var views = []View{ViewPage, ViewChanges, ViewWords}

// aroundAction is how many lines on either side of the acted element the
// changes view keeps.
const aroundAction = 2

// Look is the page in view v, cut to at most max tokens as count
// measures it (see Fit). now is the page as it is; before is the
// page before the last action, nil when there was none; acted is the
// index in now of the element that action was on, -1 when it had none or
// the element is gone.
func (v View) Look(now Page, before *Page, acted, max int, count func(string) int) Page {
	switch v {
	case ViewChanges:
		if before == nil || before.URL != now.URL {
			return now.words().Fit(max, count)
		}
		return now.compact().changes(before.compact()).cutChanges(acted, max, count)
	case ViewWords:
		return now.words().Fit(max, count)
	}
	return now.compact().Fit(max, count)
}

// Valid reports whether v is one of the views.
func (v View) Valid() bool { return slices.Contains(views, v) }

// words is the page with its elements written as words (their names and
// values, without index or role), each item of a list on one line:
// "Walnut dresser (301) 330 EUR Add to cart".
func (p Page) words() Page {
	q := p
	q.Lines = nil
	for _, l := range p.Lines {
		if l.Element != nil {
			w := l.Element.Words()
			if w == "" {
				continue
			}
			l.Text, l.Element, l.Repeat = w, nil, false
		}
		q.Lines = append(q.Lines, l)
	}
	return q.join(func(a, b Line) bool { return a.Item != 0 && a.List == b.List && a.Item == b.Item })
}

// compact puts the runs of words of one list item on one line: a card's
// "(301)" and "330 EUR" read as "(301) 330 EUR".
func (p Page) compact() Page {
	return p.join(func(a, b Line) bool {
		return a.Item != 0 && a.List == b.List && a.Item == b.Item &&
			a.Element == nil && b.Element == nil && a.Heading == 0 && b.Heading == 0
	})
}

// join merges each line into the one before it while same says so: their
// words joined by a space, their extent the two together.
func (p Page) join(same func(a, b Line) bool) Page {
	q := p
	q.Lines = nil
	for _, l := range p.Lines {
		if n := len(q.Lines); n > 0 && !l.Note && !q.Lines[n-1].Note && same(q.Lines[n-1], l) {
			last := &q.Lines[n-1]
			last.Text += " " + l.Text
			last.Heading = 0
			last.Top, last.Bottom = min(last.Top, l.Top), max(last.Bottom, l.Bottom)
			last.Offscreen = last.Offscreen && l.Offscreen
			continue
		}
		q.Lines = append(q.Lines, l)
	}
	return q
}

// lineKey is what a line says, whatever its element's index.
func lineKey(l Line) string {
	if l.Element == nil {
		return strconv.Itoa(l.Heading) + "|" + l.Text
	}
	e := *l.Element
	e.Index = 0
	return strconv.Itoa(l.Heading) + "|" + e.String()
}

// changes marks the lines of p that before did not have, by a diff of
// what the lines say: a cart link that went from "0" to "1" is the line
// that changed, not another link that says "1".
func (p Page) changes(before Page) Page {
	keys := func(lines []Line) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			if l.Note {
				out[i] = "\x00note" // the view's, not the page's: never a change
			} else {
				out[i] = lineKey(l)
			}
		}
		return out
	}
	now := keys(p.Lines)
	q := p
	q.Lines = slices.Clone(p.Lines)
	// No junk heuristics: a grid's twenty "Add to cart" lines are what
	// the diff must line up.
	m := difflib.NewMatcherWithJunk(keys(before.Lines), now, false, nil)
	for _, op := range m.GetOpCodes() {
		if op.Tag != 'r' && op.Tag != 'i' {
			continue
		}
		for j := op.J1; j < op.J2; j++ {
			q.Lines[j].Changed = !q.Lines[j].Note
		}
	}
	return q
}

// cutChanges keeps the acted element and the lines around it, then the
// changed lines nearest it, within max. The other lines, neither changed
// nor by the element, are not worth a token whatever the cap: they are
// never kept, and a note counts each run of them.
func (p Page) cutChanges(acted, max int, count func(string) int) Page {
	at := slices.IndexFunc(p.Lines, func(l Line) bool { return l.Element != nil && l.Element.Index == acted })
	rank := func(i int, l Line) float64 {
		d := math.Abs(float64(i - at))
		switch {
		case at >= 0 && d <= aroundAction:
			return d
		case l.Changed && at >= 0:
			return aroundAction + d
		case l.Changed:
			return aroundAction + p.distance(l)
		}
		return never
	}
	if at < 0 && !slices.ContainsFunc(p.Lines, func(l Line) bool { return l.Changed }) {
		q := p
		q.Lines = []Line{{Note: true, Text: "nothing on the page changed"}}
		return q
	}
	return p.cut(max, count, rank, changesNote, false)
}

// changesNote counts the lines the changes view left out: "12 lines as
// before", or how many of them are new.
func changesNote(run []Line) string {
	c := 0
	for _, l := range run {
		if l.Changed {
			c++
		}
	}
	if c == 0 {
		return plural.Of(len(run), "line") + " as before"
	}
	return fmt.Sprintf("%s, %d new, left out", plural.Of(len(run), "line"), c)
}
