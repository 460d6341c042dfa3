package agent

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
)

// A learned element is found again as a person would find it: the button
// "Pay" in the row that names the invoice, the "Email" field after the
// heading "Sign in". Values of the task's parameters are written as
// {{name}} in what is learned, so the next run's values find their own
// row.

// targetOf is how to find the element at index i of s again, with the
// values of params written back as their names.
func targetOf(s *browser.Snapshot, i int, ps params) *learned.Target {
	if i < 0 || i >= len(s.Elements) {
		return nil
	}
	e := s.Elements[i]
	t := &learned.Target{Role: e.Role, Name: ps.writeBack(e.Name), Item: ps.writeBack(itemWords(s, i)), Near: ps.writeBack(nearWords(s, i))}
	like := likeElements(s, e.Role, e.Name)
	t.Of, t.Nth = len(like), slices.Index(like, i)+1
	return t
}

// find is the index in s of the element t names, with params bound:
// one clear match, else -1. Among like elements (same role and name) the
// item's words decide (by the parameter a learned item names, else all of
// them), then the words just before it, then its place when the page
// still has as many.
func find(s *browser.Snapshot, t *learned.Target, ps params) int {
	name, ok := ps.bind(t.Name)
	if !ok {
		return -1
	}
	like := likeElements(s, t.Role, name)
	narrow := func(words string, of func(*browser.Snapshot, int) string) {
		// Plain words only choose among like elements, so a lone element
		// that moved is still found; words naming a parameter must hold
		// even for one, or another row would do.
		if words == "" || (len(like) < 2 && !strings.Contains(words, "{{")) {
			return
		}
		var kept []int
		for _, i := range like {
			if ps.matches(of(s, i), words) {
				kept = append(kept, i)
			}
		}
		like = kept
	}
	narrow(t.Item, itemWords)
	narrow(t.Near, nearWords)
	switch {
	case len(like) == 1:
		return like[0]
	case len(like) > 1 && len(like) == t.Of && t.Item == "" && t.Near == "":
		return like[t.Nth-1]
	}
	return -1
}

// likeElements are the indexes of the elements with this role and name,
// in page order.
func likeElements(s *browser.Snapshot, role, name string) []int {
	var out []int
	for _, e := range s.Elements {
		if e.Role == role && e.Name == name {
			out = append(out, e.Index)
		}
	}
	return out
}

// itemWords are the words of the list item element i stands in, other
// elements' names included, its own left out: what tells one row from
// another. "" outside a list.
func itemWords(s *browser.Snapshot, i int) string {
	at := blockOf(s, i)
	if at < 0 || s.Blocks[at].Item == 0 {
		return ""
	}
	list, item := s.Blocks[at].List, s.Blocks[at].Item
	var words []string
	for _, b := range s.Blocks {
		if b.List != list || b.Item != item || b.Element == i {
			continue
		}
		if b.Element >= 0 && b.Element < len(s.Elements) {
			words = append(words, s.Elements[b.Element].Name)
			continue
		}
		words = append(words, b.Text)
	}
	return clip(strings.Join(strings.Fields(strings.Join(words, " ")), " "), 160)
}

// nearWords is the line of words just before element i outside a list:
// the label or heading a person reads before it.
func nearWords(s *browser.Snapshot, i int) string {
	at := blockOf(s, i)
	if at < 0 || s.Blocks[at].Item != 0 {
		return ""
	}
	for k := at - 1; k >= 0; k-- {
		if b := s.Blocks[k]; b.Element < 0 {
			return clip(strings.Join(strings.Fields(b.Text), " "), 80)
		}
	}
	return ""
}

func blockOf(s *browser.Snapshot, i int) int {
	for k, b := range s.Blocks {
		if b.Element == i {
			return k
		}
	}
	return -1
}

// params are a run's parameter values by name.
type params map[string]string

var paramRef = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// writeBack writes each parameter's value in s as {{name}}, where it
// stands as a whole word: longest value first, so that a value holding
// another is written as itself.
func (ps params) writeBack(s string) string {
	names := make([]string, 0, len(ps))
	for n, v := range ps {
		if v != "" {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(a, b int) bool {
		if la, lb := len(ps[names[a]]), len(ps[names[b]]); la != lb {
			return la > lb
		}
		return names[a] < names[b]
	})
	for _, n := range names {
		s = replaceWord(s, ps[n], "{{"+n+"}}")
	}
	return s
}

// replaceWord replaces each whole-word occurrence of old in s.
func replaceWord(s, old, repl string) string {
	var b strings.Builder
	for {
		i := wordIndex(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i] + repl)
		s = s[i+len(old):]
	}
}

// wordIndex is the first index of w in s where it stands as a whole word
// (no letter or digit on either side), -1 when none.
func wordIndex(s, w string) int {
	if w == "" {
		return -1
	}
	for off := 0; ; {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return -1
		}
		i += off
		before, after := lastRune(s[:i]), firstRune(s[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return i
		}
		off = i + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func lastRune(s string) rune {
	r := []rune(s)
	if len(r) == 0 {
		return ' '
	}
	return r[len(r)-1]
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return ' '
}

// bind writes each {{name}} in s as its value; false when s names a
// parameter the run has no value for.
func (ps params) bind(s string) (string, bool) {
	ok := true
	out := paramRef.ReplaceAllStringFunc(s, func(m string) string {
		v, found := ps[m[2:len(m)-2]]
		ok = ok && found
		return v
	})
	return out, ok
}

// matches reports whether words (of an element on the page now) are the
// learned words: those that name parameters by the values' being there,
// others by being the same words.
func (ps params) matches(words, learnedWords string) bool {
	refs := paramRef.FindAllStringSubmatch(learnedWords, -1)
	if len(refs) == 0 {
		return fold(words) == fold(learnedWords)
	}
	for _, m := range refs {
		v, ok := ps[m[1]]
		if !ok || !holdsWord(words, v) {
			return false
		}
	}
	return true
}

func holdsWord(s, w string) bool { return wordIndex(fold(s), fold(w)) >= 0 }

// fold is s as compared: lower case, spaces collapsed.
func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
