package heuristic

import (
	"strconv"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// Lists of like items.
//
// A list gives each of its items its own copy of one control (a row's
// button, a card's button): the copies share a name, so they score alike
// and the first would win every tie. Which one the goal means is read off
// the words of the item each stands in.

// maxItemLines is the most lines one item spans: like elements further
// apart are not of one list (a header's link and the footer's copy).
const maxItemLines = 12

// likeItem is one of a list's like elements and what its item says.
type likeItem struct {
	index int             // the element's
	words map[string]bool // the item's key words
	codes []string        // the item's words that hold a digit, amounts aside
}

// likeLists reads the page's lists: the elements of one role and one name,
// two or more of them, each with the lines of its item. Only what is
// clicked counts: a field is filled by its own name, not by its row.
func likeLists(p calltypes.Page) [][]likeItem {
	byKey := map[string][]int{}
	var keys []string
	for i, l := range p.Lines {
		e := l.Element
		if e == nil || isTextInput(*e) || isSelect(*e) || isCheck(*e) {
			continue
		}
		name := strings.Join(strings.Fields(lower(e.Name)), " ")
		if name == "" {
			continue // nameless elements are alike by chance, not by a list
		}
		k := lower(e.Role) + "\x00" + name
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	var out [][]likeItem
	for _, k := range keys {
		at := byKey[k]
		start := 0
		for j := 1; j <= len(at); j++ {
			if j < len(at) && len(linesIn(p, at[j-1]+1, at[j])) <= maxItemLines {
				continue
			}
			if j-start >= 2 {
				if items, ok := readItems(p, at[start:j]); ok {
					out = append(out, items)
				}
			}
			start = j
		}
	}
	return out
}

// linesIn are the lines from i up to j, less the view's notes.
func linesIn(p calltypes.Page, i, j int) []int {
	var out []int
	for ; i < j; i++ {
		if !p.Lines[i].Note {
			out = append(out, i)
		}
	}
	return out
}

// readItems gives each like element (at, its lines) its item. The lines
// between two like elements are an item; whose is a matter of layout.
// Commonly an item's words come first and its control last, so each
// element owns the lines since the previous one, and the first reaches
// back as far as the second's item goes, line for line (see reach). When
// nothing before the first reads so, the control comes first and each
// owns the lines up to the next, the last reaching forward alike. When
// neither end reads as an item, the list is not read at all.
func readItems(p calltypes.Page, at []int) ([]likeItem, bool) {
	between := make([][]int, len(at)-1)
	for k := range between {
		between[k] = linesIn(p, at[k]+1, at[k+1])
		if len(between[k]) == 0 {
			return nil, false // controls side by side: no item between
		}
	}
	spans := make([][]int, len(at))
	if first := reach(p, at[0], between[0], -1); len(first) > 0 {
		spans[0] = first
		copy(spans[1:], between)
	} else if last := reach(p, at[len(at)-1], between[len(between)-1], 1); len(last) > 0 {
		copy(spans, between)
		spans[len(at)-1] = last
	} else {
		return nil, false
	}
	items := make([]likeItem, len(at))
	for k, span := range spans {
		var text []string
		for _, i := range span {
			l := p.Lines[i]
			if l.Element != nil {
				text = append(text, l.Element.Name)
			} else {
				text = append(text, l.Text)
			}
		}
		joined := strings.Join(text, "\n")
		it := likeItem{index: p.Lines[at[k]].Element.Index, words: map[string]bool{}, codes: codeWords(joined)}
		for _, w := range keywords(joined) {
			it.words[w] = true
		}
		items[k] = it
	}
	return items, true
}

// reach reads the item of a list's end element, at line from, going in
// dir (-1 back, 1 on) from it: as many lines as shape, its neighbour's
// item, and only while each is the same kind of line as the one at the
// same place in shape, so the words before a list (its heading, a
// table's header row) stay out of its first item. Going back, a heading
// of the kind shape starts with is the item's start, however short the
// item is: a card begins with its title.
func reach(p calltypes.Page, from int, shape []int, dir int) []int {
	var out []int
	for i := from + dir; i >= 0 && i < len(p.Lines) && len(out) < len(shape); i += dir {
		l := p.Lines[i]
		if l.Note {
			continue
		}
		want := shape[len(out)]
		if dir < 0 {
			want = shape[len(shape)-1-len(out)]
		}
		if kind(l) == kind(p.Lines[want]) {
			out = append(out, i)
			continue
		}
		if dir < 0 && l.Heading > 0 && kind(l) == kind(p.Lines[shape[0]]) {
			out = append(out, i)
		}
		break
	}
	return out
}

// kind is what a line is, for comparing two items' shapes: a heading of a
// level, an element of a role, or words.
func kind(l calltypes.Line) string {
	switch {
	case l.Heading > 0:
		return "h" + strconv.Itoa(l.Heading)
	case l.Element != nil:
		return "element " + lower(l.Element.Role)
	}
	return "words"
}

// boundWords set a limit on a number rather than name a thing by it
// ("under 500").
var boundWords = wordSet(`under over below above than least most within max min maximum minimum upto budget`)

// codeWords are the words of s that hold a digit, amounts of money left
// out: what tells one item of a list from another ("INV-1042", "#17").
func codeWords(s string) []string {
	var out []string
	for _, f := range strings.Fields(money.ReplaceAllString(s, " ")) {
		f = strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) })
		if strings.ContainsAny(f, "0123456789") {
			out = append(out, f)
		}
	}
	return out
}

// goalCodes are the goal's words that name one thing by a number or a
// code: three digits or more ("1045"), or digits among letters
// ("INV-1045", "SKU-77"); a small number is more often a quantity, and
// a number after a bound ("under 500") is no name.
func goalCodes(goal string) []string {
	var out []string
	prev := ""
	for _, f := range strings.Fields(money.ReplaceAllString(cutText(goal, 2000), " ")) {
		f = strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) })
		digits, letters := 0, false
		for _, r := range f {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case isWordRune(r):
				letters = true
			}
		}
		if (digits >= 3 || (digits > 0 && letters)) && !boundWords[prev] {
			out = append(out, f)
		}
		prev = strings.ToLower(f)
	}
	return out
}

// shape is a code with its digits as 9s, as a phrase: "INV-1042" and
// "inv 1043" are both "inv 9999".
func shape(code string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '9'
		}
		return r
	}, phrase(code))
}

// unnamedItems are the indexes of the like elements whose items the goal
// does not name, to be left alone. A goal's code that every item has one
// of its own like, but that the page does not show, names an item that is
// not there: every element of that list is left alone, since acting on
// another item would be wrong. Else the key words of the plan's step, or
// failing that of the goal, that some items hold and others do not pick
// the items holding most of them. A list the goal names nothing of is
// left whole: which of its elements is best is for the scoring to say.
func unnamedItems(p calltypes.Page, goal, step string) map[int]bool {
	lists := likeLists(p)
	if len(lists) == 0 {
		return nil
	}
	out := map[int]bool{}
	shown := newHaystack(p.Title, shownWords(p))
	var missing []string
	for _, c := range goalCodes(goal) {
		if !shown.has(c) {
			missing = append(missing, shape(c))
		}
	}
	stepWords, goalWords := content(keywords(step)), content(keywords(goal))
	for _, items := range lists {
		if absent(items, missing) {
			for _, it := range items {
				out[it.index] = true
			}
			continue
		}
		keep := named(items, stepWords)
		if keep == nil {
			keep = named(items, goalWords)
		}
		for k, it := range items {
			if keep != nil && !keep[k] {
				out[it.index] = true
			}
		}
	}
	return out
}

// absent reports whether one of the shapes of the goal's missing codes is
// the shape of a code every item has and no other item shares.
func absent(items []likeItem, missing []string) bool {
	if len(missing) == 0 {
		return false
	}
	holders := map[string]int{} // a code's phrase: how many items hold it
	for _, it := range items {
		seen := map[string]bool{}
		for _, c := range it.codes {
			if pc := phrase(c); !seen[pc] {
				seen[pc] = true
				holders[pc]++
			}
		}
	}
	for _, m := range missing {
		every := true
		for _, it := range items {
			own := false
			for _, c := range it.codes {
				own = own || (holders[phrase(c)] == 1 && strings.Contains(" "+shape(c)+" ", " "+m+" "))
			}
			every = every && own
		}
		if every {
			return true
		}
	}
	return false
}

// named marks the items that hold the most of words that tell the items
// apart (held by some, not all); nil when no word does.
func named(items []likeItem, words []string) []bool {
	score := make([]int, len(items))
	best := 0
	for _, w := range words {
		n := 0
		for _, it := range items {
			if it.words[w] {
				n++
			}
		}
		if n == 0 || n == len(items) {
			continue
		}
		for k, it := range items {
			if it.words[w] {
				score[k]++
				best = max(best, score[k])
			}
		}
	}
	if best == 0 {
		return nil
	}
	keep := make([]bool, len(items))
	for k, s := range score {
		keep[k] = s == best
	}
	return keep
}
