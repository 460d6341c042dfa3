package agent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
)

// Where an answer was read. A summary that copied whole lines of the
// page into its answer read them there: the next run of the template
// reads the same lines, found by where they stand, and needs no model.
// Only numbers and parameter values may differ from run to run; the
// summary's own words around the lines are kept only when they hold no
// figure and no word of the page, which would be data the next page may
// not have.

// pageLine is one line of a page as an answer reads it: its words, the
// heading it stands under, its place there, and the size of its list.
type pageLine struct {
	text  string
	under string
	at    int
	items int
}

// pageLines are snap's lines in page order: its blocks' words, an
// element's by its name; then the lines of the text files it shows as
// downloaded.
func pageLines(s *browser.Snapshot) []pageLine {
	items := map[int]int{}
	for _, b := range s.Blocks {
		if b.List > 0 {
			items[b.List] = max(items[b.List], b.Item)
		}
	}
	var out []pageLine
	under, at := "", 0
	for _, b := range s.Blocks {
		text := b.Text
		if b.Element >= 0 && b.Element < len(s.Elements) {
			text = s.Elements[b.Element].Name
		}
		text = strings.Join(strings.Fields(text), " ")
		at++
		out = append(out, pageLine{text: text, under: under, at: at, items: items[b.List]})
		if b.Heading > 0 {
			under, at = text, 0
		}
	}
	// A downloaded file's lines stand under its name, as the view shows
	// what it begins with.
	for _, d := range s.Downloads {
		if d.Text == "" {
			continue
		}
		for i, line := range strings.Split(strings.TrimSpace(strings.ReplaceAll(d.Text, "\r\n", "\n")), "\n") {
			out = append(out, pageLine{text: strings.Join(strings.Fields(line), " "), under: "file " + d.Name, at: i + 1})
		}
	}
	return out
}

// number is a figure as it varies: 12, 1,204.50, 2026-12-05's parts.
var number = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)*`)

// shapeOf is a line's words as a learned line is matched: case and
// spacing folded, parameter values (in any case) as {{name}}, numbers
// as #.
func (ps params) shapeOf(s string) string {
	lower := make(params, len(ps))
	for n, v := range ps {
		lower[n] = strings.ToLower(v)
	}
	s = lower.writeBack(strings.ToLower(s))
	var b strings.Builder
	at := 0
	for _, m := range paramRef.FindAllStringIndex(s, -1) {
		b.WriteString(number.ReplaceAllString(s[at:m[0]], "#") + s[m[0]:m[1]])
		at = m[1]
	}
	b.WriteString(number.ReplaceAllString(s[at:], "#"))
	return strings.Join(strings.Fields(b.String()), " ")
}

// holdsValue reports words that still hold a parameter's value, in
// another case than the value's own.
func (ps params) holdsValue(words string) bool {
	for _, v := range ps {
		if v != "" && holdsWord(words, v) {
			return true
		}
	}
	return false
}

// answerOf is where answer was read on snap: nil when some of it was
// not read from whole lines, or the summary's own words hold what the
// page said (a word of the page, a figure, a yes or a no).
func (l *learning) answerOf(snap *browser.Snapshot, answer string) *learned.Answer {
	lines := pageLines(snap)
	spans := readSpans(answer, lines)
	if len(spans) == 0 {
		return nil
	}
	page, own := wordSet(snap.Text), wordSet(l.tmpl.Goal)
	for _, s := range l.tmpl.Steps {
		addWords(own, wordSet(s.Agent))
	}
	a := &learned.Answer{}
	words := func(w string) bool {
		if w == "" {
			return true
		}
		w = l.ps.writeBack(w)
		if l.ps.holdsValue(w) || !summaryWords(paramRef.ReplaceAllString(w, " "), page, own) {
			return false
		}
		a.Parts = append(a.Parts, learned.Part{Words: w})
		return true
	}
	at := 0
	for _, sp := range spans {
		if !words(answer[at:sp.start]) {
			return nil
		}
		ln := lines[sp.line]
		a.Parts = append(a.Parts, learned.Part{Line: &learned.Line{Under: l.ps.shapeOf(ln.under), At: ln.at, Items: ln.items, Shape: l.ps.shapeOf(ln.text)}})
		at = sp.end
	}
	if !words(answer[at:]) || len(a.Parts) > learned.MaxAnswerParts {
		return nil
	}
	return a
}

type span struct{ start, end, line int }

// readSpans are the places in answer that hold a whole line of the page,
// longest lines first and none overlapping, in the answer's order. Lines
// with the same words are read in page order: the first time the answer
// says them from the first such line, the second from the second, and
// any more from the last.
func readSpans(answer string, lines []pageLine) []span {
	same := map[string][]int{}
	var texts []string
	for i, ln := range lines {
		if len([]rune(ln.text)) < 3 || !strings.ContainsFunc(ln.text, isWordRune) {
			continue
		}
		if same[ln.text] == nil {
			texts = append(texts, ln.text)
		}
		same[ln.text] = append(same[ln.text], i)
	}
	sort.SliceStable(texts, func(a, b int) bool { return len(texts[a]) > len(texts[b]) })
	var spans []span
	free := func(s, e int) bool {
		for _, sp := range spans {
			if s < sp.end && sp.start < e {
				return false
			}
		}
		return true
	}
	for _, text := range texts {
		at := same[text]
		for off, n := 0, 0; off < len(answer); {
			k := wordIndex(answer[off:], text)
			if k < 0 {
				break
			}
			s, e := off+k, off+k+len(text)
			if free(s, e) {
				spans = append(spans, span{s, e, at[min(n, len(at)-1)]})
				n++
			}
			off = s + 1
		}
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	return spans
}

// summaryWords reports words the summary may keep as written: none a
// figure, a yes or a no, or a word of the page that the task's own words
// and the glue of a sentence do not account for.
func summaryWords(s string, page, own map[string]bool) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) }) {
		switch {
		case strings.ContainsAny(w, "0123456789"), slices.Contains(figureWords, w):
			return false
		case page[w] && !own[w] && !slices.Contains(glueWords, w):
			return false
		}
	}
	return true
}

// figureWords say what the page said in words of their own.
var figureWords = []string{"yes", "no", "none", "nothing", "nobody", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million", "billion", "half", "both", "all", "true", "false", "empty", "single", "double", "first", "second", "third", "last"}

// glueWords hold a sentence together whatever the page says.
var glueWords = []string{"a", "an", "the", "is", "are", "was", "were", "be", "there", "here", "it", "its", "this", "that", "these", "those", "of", "in", "on", "at", "to", "for", "from", "with", "by", "and", "or", "as", "has", "have", "says", "said", "reads", "shows", "page", "which", "who", "what"}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) }) {
		set[w] = true
	}
	return set
}

func addWords(into, from map[string]bool) {
	for w := range from {
		into[w] = true
	}
}

// readAnswer reads a learned answer from snap: each line found where it
// stood, of its learned shape, the only one there. why says what did not
// fit.
func (l *learning) readAnswer(snap *browser.Snapshot, a *learned.Answer) (answer, why string) {
	lines := pageLines(snap)
	var b strings.Builder
	for _, p := range a.Parts {
		if p.Line == nil {
			w, ok := l.ps.bind(p.Words)
			if !ok {
				return "", "the answer names a parameter the run has no value for"
			}
			b.WriteString(w)
			continue
		}
		found := -1
		for i, ln := range lines {
			if !l.isLine(ln, p.Line) {
				continue
			}
			if found >= 0 {
				return "", fmt.Sprintf("two lines like %q under %q", p.Line.Shape, p.Line.Under)
			}
			found = i
		}
		if found < 0 {
			return "", fmt.Sprintf("no line like %q at line %d under %q", p.Line.Shape, p.Line.At, p.Line.Under)
		}
		b.WriteString(lines[found].text)
	}
	return b.String(), ""
}

// isLine reports whether ln is the learned line: under the same heading,
// and either found by the parameters it holds (this run's row, wherever
// it stands in its list and whatever else it says) or, holding none, at
// its place, in a list as long, and of its shape.
func (l *learning) isLine(ln pageLine, want *learned.Line) bool {
	if l.ps.shapeOf(ln.under) != want.Under {
		return false
	}
	if paramRef.MatchString(want.Shape) {
		return (ln.items > 0) == (want.Items > 0) && l.ps.matches(ln.text, want.Shape)
	}
	return ln.at == want.At && ln.items == want.Items && l.ps.shapeOf(ln.text) == want.Shape
}

// learnedAnswer answers the goal from the lines the learned run's summary
// read, when the run replayed whole, the page holds them where they stood
// and the success check passes: no summary is asked.
func (r *runner) learnedAnswer(ctx context.Context) (bool, error) {
	l := r.learn
	if !l.replayedWhole() || l.entry.Answer == nil || r.t.AnswerType != "" {
		return false, nil
	}
	snap, err := r.answerPage(ctx)
	if err != nil {
		return false, err
	}
	answer, why := l.readAnswer(snap, l.entry.Answer)
	if why != "" {
		l.miss(learned.MissAnswer, why)
		r.progress("learned: the answer is not where it was read: %s; the model answers", why)
		return false, nil
	}
	if ok, err := r.stillHolds(ctx); err != nil || !ok {
		return false, err
	}
	r.res.Answer, l.res.AnswerRead = answer, true
	l.res.TokensSaved += l.entry.SummaryReserved
	r.progress("answer  %s  (read where the learned run read it, no call)", clip(answer, 120))
	return true, nil
}
