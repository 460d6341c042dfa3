package browser

import (
	"fmt"
	"strings"
)

// Cut says what Fit left out of a snapshot.
type Cut struct {
	Elements int // elements cut from the end
	Words    int // words cut from the end of the text
}

// String is the marker a rendering ends with so a model knows there is
// more; empty when nothing was cut.
func (c Cut) String() string {
	var parts []string
	if c.Elements > 0 {
		parts = append(parts, fmt.Sprintf("%d more elements", c.Elements))
	}
	if c.Words > 0 {
		parts = append(parts, fmt.Sprintf("%d more words of text", c.Words))
	}
	if len(parts) == 0 {
		return ""
	}
	return "[truncated: " + strings.Join(parts, ", ") + "; scroll or extract to see more]"
}

// Fit cuts the snapshot until fits holds, whatever the rendering fits
// measures: the text first, word by word from the end (keeping its line
// breaks), then, with no text left, the elements from the end, which
// come last on the page. It returns the largest such copy and what was
// cut; when even the bare copy does not fit, that is what it returns.
// The copy resolves indexes on the same page, and a kept element keeps
// its index. fits is called a logarithmic number of times, and must hold
// for any smaller cut when it holds for a larger one.
func (s *Snapshot) Fit(fits func(*Snapshot, Cut) bool) (*Snapshot, Cut) {
	text := strings.TrimSpace(s.Text)
	words, elems := len(strings.Fields(text)), len(s.Elements)
	keep := func(w, e int) (*Snapshot, Cut) {
		c := *s
		c.Text = cutText(text, w)
		c.Elements = s.Elements[:e:e] // appending to the copy cannot write into s
		return &c, Cut{Elements: elems - e, Words: words - w}
	}
	try := func(w, e int) bool { return fits(keep(w, e)) }
	var w, e int
	switch {
	case try(words, elems):
		w, e = words, elems
	case try(0, elems):
		w, e = largest(words, func(n int) bool { return try(n, elems) }), elems
	default:
		e = largest(elems, func(n int) bool { return try(0, n) })
	}
	c, cut := keep(w, e)
	c.Elements = append([]Element(nil), c.Elements...)
	return c, cut
}

// cutText keeps the first n words of text, keeping its line breaks.
func cutText(text string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	inWord := false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if !space && !inWord {
			if count == n {
				return strings.TrimSpace(text[:i])
			}
			count++
		}
		inWord = !space
	}
	return text
}

// largest is the largest n in [0, max] with fits(n), assuming fits is
// monotone and fits(0) holds.
func largest(max int, fits func(int) bool) int {
	lo, hi := 0, max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
