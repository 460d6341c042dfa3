package calltypes

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/internal/plural"
)

// maxLineRunes bounds one line of words once a page must be cut, so that
// no paragraph takes what the rest of the page needs.
const maxLineRunes = 300

// quarterChars counts a token per four characters, as Azure estimates a
// prompt: the count of a caller that brings no tokenizer.
func quarterChars(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// Fit returns the page cut to at most max tokens as count measures its
// rendering (a token per four characters when count is nil; the agent
// counts o200k tokens): what is in the viewport first, then
// what is nearest it, above or below. A copy of a link already on the page
// (a footer repeating the navigation) goes before anything else, and an
// item of a list (a product card, a row) is kept or cut whole, so a button
// never loses its product. Where lines were cut a note says what and how
// to reach it ("… 41 more elements and 230 words below: scroll down"), so
// text and elements are cut together, never all of one before the other.
func (p Page) Fit(max int, count func(string) int) Page {
	p = p.markRepeats()
	rank := func(_ int, l Line) float64 {
		if l.Repeat {
			return math.Inf(1)
		}
		return p.distance(l)
	}
	return p.cut(max, count, rank, p.whereNote, true)
}

// markRepeats marks each link whose name an earlier link outside its own
// list already has: the footer's "Desks" after the header's. Two products
// of one grid that share a name are two products.
func (p Page) markRepeats() Page {
	seen := map[string]int{} // name → the list of its first link, -1 for none
	lines := slices.Clone(p.Lines)
	for i, l := range lines {
		if l.Element == nil || l.Element.Role != "link" || l.Element.Name == "" {
			continue
		}
		name := strings.ToLower(l.Element.Name)
		list := -1
		if l.Item != 0 {
			list = l.List
		}
		first, ok := seen[name]
		switch {
		case !ok:
			seen[name] = list
		case first != list || list == -1:
			lines[i].Repeat = true
		}
	}
	// One repeated link costs less than the note that would fold it: only
	// runs of them (a footer's column) are folded first.
	for i := 0; i < len(lines); {
		if !lines[i].Repeat {
			i++
			continue
		}
		j, links := i, 0
		for j < len(lines) && (lines[j].Repeat || lines[j].Element == nil && !lines[j].Note) {
			if lines[j].Repeat {
				links++
			}
			j++
		}
		if links < minRepeatRun {
			for k := i; k < j; k++ {
				lines[k].Repeat = false
			}
		}
		i = j
	}
	p.Lines = lines
	return p
}

// minRepeatRun is the fewest repeated links folded as one.
const minRepeatRun = 3

// distance is how far a line is from the viewport, 0 inside it.
func (p Page) distance(l Line) float64 {
	top, bottom := p.Viewport[0], p.Viewport[1]
	switch {
	case bottom <= top: // no viewport known: the top of the page first
		return l.Top
	case l.Bottom <= top:
		return top - l.Bottom
	case l.Top >= bottom:
		return l.Top - bottom
	}
	return 0
}

// never ranks a line no cap makes room for.
const never = math.MaxFloat64

// unit is a run of lines cut or kept together: a list's item, or one line.
type unit struct {
	from, to int // lines[from:to]
	rank     float64
}

// cut keeps the units of lowest rank that fit within max, in document
// order, and writes a note for each run of units it left out.
// rank is given each line with its place in p.Lines; a note already on
// the page is kept whatever its rank, a line ranked never is not.
// byList splits a run left out at the lists it holds, a note each.
func (p Page) cut(max int, count func(string) int, rank func(int, Line) float64, note func([]Line) string, byList bool) Page {
	if count == nil {
		count = quarterChars
	}
	units := p.units(rank)
	var order []int
	for i, u := range units {
		if u.rank != never {
			order = append(order, i)
		}
	}
	if len(order) == len(units) && count(p.Render()) <= max {
		return p
	}
	p = p.clipLines()
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(units[a].rank, units[b].rank) })
	keep := func(n int) Page {
		kept := make([]bool, len(units))
		shown := map[int]bool{} // lists some item of which is kept
		for _, u := range order[:n] {
			kept[u] = true
			if l := p.Lines[units[u].from]; l.Item != 0 {
				shown[l.List] = true
			}
		}
		q := p
		q.Lines = nil
		for i := 0; i < len(units); {
			if kept[i] {
				q.Lines = append(q.Lines, p.Lines[units[i].from:units[i].to]...)
				i++
				continue
			}
			j := i
			for j < len(units) && !kept[j] {
				j++
			}
			runs := [][]Line{p.Lines[units[i].from:units[j-1].to]}
			if byList {
				runs = segments(runs[0], shown)
			}
			for _, run := range runs {
				q.Lines = append(q.Lines, Line{Note: true, Text: note(run), Top: run[0].Top, Bottom: run[len(run)-1].Bottom})
			}
			i = j
		}
		return q
	}
	lo, hi := 0, len(order)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(keep(mid).Render()) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return keep(lo)
}

// segments splits lines left out into the runs of items of a list the
// page still shows some of (the rest of a product grid) and the rest
// between them, so that each note can say which it stands for.
func segments(run []Line, shown map[int]bool) [][]Line {
	type seg struct {
		list     int
		from, to int
	}
	var segs []seg
	for i, l := range run {
		list := 0
		if l.Item != 0 && shown[l.List] {
			list = l.List
		}
		if n := len(segs); n > 0 && segs[n-1].list == list {
			segs[n-1].to = i + 1
			continue
		}
		segs = append(segs, seg{list, i, i + 1})
	}
	// A run of one item is no run of like items: it joins the rest.
	var out [][]Line
	var rest []Line
	flush := func() {
		if len(rest) > 0 {
			out = append(out, rest)
			rest = nil
		}
	}
	for _, sg := range segs {
		lines := run[sg.from:sg.to]
		if sg.list != 0 && listItems(lines) >= 2 {
			flush()
			out = append(out, lines)
			continue
		}
		rest = append(rest, lines...)
	}
	flush()
	return out
}

// clipLines cuts every line of words longer than maxLineRunes.
func (p Page) clipLines() Page {
	lines := slices.Clone(p.Lines)
	for i, l := range lines {
		if l.Element == nil && !l.Note {
			lines[i].Text = clipRunes(shown(l.Text), maxLineRunes)
		}
	}
	p.Lines = lines
	return p
}

// units groups the lines of one list item, and ranks each group by its
// best line.
func (p Page) units(rank func(int, Line) float64) []unit {
	var out []unit
	for i := 0; i < len(p.Lines); {
		l := p.Lines[i]
		j := i + 1
		if l.Item != 0 {
			for j < len(p.Lines) && p.Lines[j].List == l.List && p.Lines[j].Item == l.Item {
				j++
			}
		}
		u := unit{from: i, to: j, rank: math.Inf(1)}
		for k, m := range p.Lines[i:j] {
			if m.Note {
				u.rank = math.Inf(-1)
				break
			}
			u.rank = min(u.rank, rank(i+k, m))
		}
		out = append(out, u)
		i = j
	}
	return out
}

// whereNote says what a run of cut lines held, and where to find it: the
// links that repeat ones above, more items of the list around it, or so
// many elements and words above or below the viewport.
func (p Page) whereNote(run []Line) string {
	c := countLines(run)
	if c.repeats == c.elements && c.elements > 0 && c.words == 0 {
		return plural.Of(c.elements, "link") + " repeating links above"
	}
	what := c.String()
	if items := listItems(run); items > 0 {
		what = plural.Of(items, "more item/more items") + " like these (" + plural.Of(c.elements, "element") + ")"
	}
	// A run that goes on past the viewport's bottom, none of it above the
	// viewport, is reached by scrolling down; the other way round, up.
	first, last := run[0], run[len(run)-1]
	switch top, bottom := p.Viewport[0], p.Viewport[1]; {
	case bottom > top && last.Bottom > bottom && first.Top >= top:
		return what + " below: scroll down"
	case bottom > top && first.Top < top && last.Bottom <= bottom:
		return what + " above: scroll up"
	}
	return what + " left out"
}

// lineCount is what a run of lines holds.
type lineCount struct {
	elements, words, repeats, changed int
}

func countLines(run []Line) lineCount {
	var c lineCount
	for _, l := range run {
		switch {
		case l.Note:
			// an earlier note's count is not known here; its words are few
		case l.Element != nil:
			c.elements++
			if l.Repeat {
				c.repeats++
			}
		default:
			c.words += len(strings.Fields(l.Text))
		}
		if l.Changed {
			c.changed++
		}
	}
	return c
}

// String counts elements and words: "41 more elements and 230 words".
func (c lineCount) String() string {
	var parts []string
	if c.elements > 0 {
		parts = append(parts, plural.Of(c.elements, "more element/more elements"))
	}
	if c.words > 0 {
		w := plural.Of(c.words, "word")
		if len(parts) == 0 {
			w = plural.Of(c.words, "more word/more words")
		}
		parts = append(parts, w)
	}
	if len(parts) == 0 {
		return "more lines"
	}
	return strings.Join(parts, " and ")
}

// listItems is the number of items a run holds when it is nothing but
// items of one list; 0 otherwise.
func listItems(run []Line) int {
	list, items, last := run[0].List, 0, -1
	for _, l := range run {
		if l.List == 0 || l.List != list {
			return 0
		}
		if l.Item != last {
			items, last = items+1, l.Item
		}
	}
	if items < 2 {
		return 0
	}
	return items
}
