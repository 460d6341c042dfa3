package browser

import (
	"math"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/internal/redact"
)

// A snapshot's masks are the places on the page that show what its words
// do not: a secret's value (which the words show by name or as the
// Marker), anything else redaction took out, a password field whatever
// it holds, an element no action may touch, a frame the snapshot could
// not read. Screenshot paints them black. The walk knows where each
// element's and each line's words are painted; the redaction knows which
// words it changed.

// rect is a region of the page in CSS pixels of the top document, by its
// corners; empty when it has no area.
type rect struct{ x0, y0, x1, y1 float64 }

// everywhere is the whole of whatever a shot shows: where the page shows
// words the snapshot could not place (a PDF's rows).
var everywhere = rect{math.Inf(-1), math.Inf(-1), math.Inf(1), math.Inf(1)}

func boxRect(b [4]float64) rect { return rect{b[0], b[1], b[0] + b[2], b[1] + b[3]} }

func (r rect) empty() bool { return !(r.x0 < r.x1 && r.y0 < r.y1) }

func (r rect) union(o rect) rect {
	switch {
	case r.empty():
		return o
	case o.empty():
		return r
	}
	return rect{min(r.x0, o.x0), min(r.y0, o.y0), max(r.x1, o.x1), max(r.y1, o.y1)}
}

// area is where the block's words are painted.
func (b Block) area() rect {
	if b.left == 0 && b.right == 0 && b.Top == 0 && b.Bottom == 0 {
		return everywhere
	}
	return rect{b.left, b.Top, b.right, b.Bottom}
}

// shownValue is a field's value the page paints where no element of the
// snapshot stands for it.
type shownValue struct {
	where rect
	value string
	frame int
}

func (w *walker) boxRect(v *docView, i int) rect {
	if b, ok := w.box(v, i); ok {
		return boxRect(b)
	}
	return rect{}
}

// inked adds a box to where the element being walked is painted.
func (w *walker) inked(b [4]float64) {
	if n := len(w.ink); n > 0 && b[2] > 0 && b[3] > 0 {
		w.ink[n-1] = w.ink[n-1].union(boxRect(b))
	}
}

// popInk ends the element being walked: where it is painted, which is
// also where the element around it is.
func (w *walker) popInk() rect {
	r := w.ink[len(w.ink)-1]
	w.ink = w.ink[:len(w.ink)-1]
	if n := len(w.ink); n > 0 {
		w.ink[n-1] = w.ink[n-1].union(r)
	}
	return r
}

// noteField masks a password field, whatever it holds and whether or not
// it is listed, and keeps the value of a field the snapshot does not list
// for the redaction to judge.
func (w *walker) noteField(v *docView, i int, tag string, attrs map[string]string, listed bool) {
	if tag != "input" && tag != "textarea" {
		return
	}
	r := w.boxRect(v, i)
	if r.empty() {
		return
	}
	if tag == "input" && strings.EqualFold(attrs["type"], "password") {
		w.snapshot.masks = append(w.snapshot.masks, r)
		return
	}
	value := v.inputValue[i]
	if tag == "textarea" {
		value = v.textValue[i]
	}
	if !listed && value != "" {
		w.snapshot.unlisted = append(w.snapshot.unlisted, shownValue{r, value, v.frame})
	}
}

// unread masks a frame whose document the snapshot does not hold (one in
// another process): nothing it shows was redacted.
func (w *walker) unread(v *docView, i int, tag string) {
	if tag != "iframe" && tag != "frame" {
		return
	}
	if _, ok := v.contentDoc[i]; ok {
		return
	}
	if r := w.boxRect(v, i); !r.empty() {
		w.snapshot.masks = append(w.snapshot.masks, r)
	}
}

// shownWords are the words of a snapshot's elements and blocks as the
// page has them, copied before redaction to tell what it changed.
type shownWords struct {
	elems  [][]string
	blocks []string
}

func elementWords(e *Element) []string {
	return append([]string{e.Name, e.Placeholder, e.Value}, e.Options...)
}

func wordsOf(s *Snapshot) shownWords {
	var w shownWords
	for i := range s.Elements {
		w.elems = append(w.elems, elementWords(&s.Elements[i]))
	}
	for _, b := range s.Blocks {
		w.blocks = append(w.blocks, b.Text)
	}
	return w
}

// maskRedacted masks where the page shows the words redaction changed
// (was is them before), and every element no action may touch. A link's
// address is not painted, so a token taken out of one masks nothing.
func (p *Page) maskRedacted(s *Snapshot, was shownWords) {
	for i := range s.Elements {
		e := &s.Elements[i]
		if len(e.untouchable) > 0 || i >= len(was.elems) || !slices.Equal(was.elems[i], elementWords(e)) {
			s.masks = append(s.masks, e.shows...)
		}
	}
	for i, b := range s.Blocks {
		if i >= len(was.blocks) || b.Text != was.blocks[i] {
			s.masks = append(s.masks, b.area())
		}
	}
	for _, u := range s.unlisted {
		if redact.Text(p.hideOn(s.hosts[u.frame], u.value)) != u.value {
			s.masks = append(s.masks, u.where)
		}
	}
	s.unlisted = nil // judged: nothing else reads them
}
