package heuristic

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// The final answer: the line of the page that answers what the goal asks
// (its price, its count, the name it asks for), or, for a goal that asks
// for nothing but does something, the line that shows what the deed did.

// maxSummary is about how long a summary gets, in bytes.
const maxSummary = 400

// scored is a line and how well it answers.
type scored struct {
	pos, score int
}

// summarize answers the goal from the page's lines; see Model.
func summarize(in calltypes.SummaryInput) calltypes.Summary {
	g := readGoal(in.Goal)
	lines := splitSentences(in.Page.Words())
	onPage := len(lines)
	for _, n := range in.Notes {
		lines = append(lines, splitSentences(n)...)
	}
	lines = append(lines, fileLines(in.Page)...)
	var ss []scored
	if ask := askOf(in.Goal); ask != "" {
		ss = answerAsk(ask, g, lines, onPage)
	} else {
		ss = answerDeed(in.History, g, lines, onPage)
	}
	if len(ss) == 0 {
		if t := strings.Join(strings.Fields(in.Page.Title), " "); t != "" {
			return calltypes.Summary{Answer: cutText(t, maxSummary)}
		}
		return calltypes.Summary{Answer: "nothing on the page matches the goal"}
	}
	return calltypes.Summary{Answer: best(ss, lines)}
}

// fileLines are the lines of the files the view quotes as downloaded.
func fileLines(p calltypes.Page) []string {
	var out []string
	for _, l := range p.Lines {
		if lines, ok := calltypes.FileNoteLines(l.Text); l.Note && ok {
			out = append(out, lines...)
		}
	}
	return out
}

// askOf is what the goal asks: the goal when it is a question ("What is
// the price of …?"), else its last step when that reads something off the
// page ("report the price of the cheapest desk"); "" when the goal only
// does things.
func askOf(goal string) string {
	if f := terms(goal); len(f) > 0 && (questionWords[f[0]] || strings.HasSuffix(strings.TrimSpace(goal), "?")) {
		return goal
	}
	steps := plan(goal).Steps
	if last := steps[len(steps)-1]; len(terms(last)) > 0 && askWords[terms(last)[0]] {
		return last
	}
	return ""
}

// questionWords open a question.
var questionWords = wordSet(`what which who whom whose when where why how is are was were does do did can`)

// answerAsk scores the lines that hold what the ask asks for: its first
// word that means something ("price" in "report the price of the cheapest
// desk", "member" in "how many members") must be there. A superlative of
// price picks the one amount it names; a count, a line that counts the
// thing. The page is the answer; the notes and files stand in for a page
// that says nothing to it. Only when no line holds what is asked do the
// goal's other words choose.
func answerAsk(ask string, g goalInfo, lines []string, onPage int) []scored {
	asked := content(keywords(ask))
	type reading struct {
		words []string
		skip  map[string]bool
		first string
	}
	var readings []reading
	if len(asked) > 0 {
		readings = append(readings, reading{asked, quotedWords(quotes(ask)), asked[0]})
	}
	readings = append(readings, reading{g.content, quotedWords(g.quotes), ""})
	for _, r := range readings {
		for _, src := range [][]string{lines[:onPage], lines} {
			ss := score(src, r.words, r.skip, r.first, g)
			if len(ss) == 0 {
				continue
			}
			if s, ok := superlative(ask, ss, src); ok {
				return []scored{s}
			}
			if s, ok := counted(ask, asked, ss, src); ok {
				return s
			}
			return ss
		}
	}
	return nil
}

// answerDeed finds the lines that show what the last deed did. Its
// record says it: the item its element stood in and what the element now
// reads (`button "Add to cart" in "Walnut dresser" → changed; it now reads
// "Added"`); a line that holds all of that is the answer. Else the lines
// that share the goal's words and hold its quoted values.
func answerDeed(history []calltypes.Taken, g goalInfo, lines []string, onPage int) []scored {
	var effect []string
	for i := len(history) - 1; i >= 0; i-- {
		if k := history[i].Action.Kind; k == calltypes.ActClick || k == calltypes.ActType || k == calltypes.ActSelect {
			if q := quotedIn(history[i].Element); len(q) > 1 {
				effect = append(effect, q[1:]...) // past its own name
			}
			effect = append(effect, quotedIn(history[i].Outcome)...)
			break
		}
	}
	for _, src := range [][]string{lines[:onPage], lines} {
		if len(effect) > 0 {
			var all []scored
			for i, l := range src {
				h := newHaystack(l)
				if !slices.ContainsFunc(effect, func(e string) bool { return !h.has(e) }) {
					all = append(all, scored{i, 1})
				}
			}
			if len(all) > 0 {
				return all
			}
		}
		var ss []scored
		for i, l := range src {
			h := evidence(l)
			n := 0
			for _, w := range g.content {
				if h.words[w] {
					n += 2
				}
			}
			for _, q := range g.quotes {
				if h.has(q.text) {
					n += 2
				}
			}
			if n > 0 {
				ss = append(ss, scored{i, n})
			}
		}
		if len(ss) > 0 {
			return ss
		}
	}
	return nil
}

// quotedIn is the double-quoted strings of s, in order.
func quotedIn(s string) []string {
	var out []string
	for i := strings.IndexByte(s, '"'); i >= 0; i = strings.IndexByte(s, '"') {
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil {
			break
		}
		if v, err := strconv.Unquote(q); err == nil && strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
		s = s[i+len(q):]
	}
	return out
}

// score rates each line by the words it shares with words (2 each, less
// those in skip; 4 for a number, which names one item of many: invoice
// INV-1043, order 8812) and a quoted value of the goal it holds (1); a
// line without must does not answer. Lines said twice count once.
func score(lines, words []string, skip map[string]bool, must string, g goalInfo) []scored {
	var ss []scored
	seen := map[string]bool{}
	for i, s := range lines {
		h := evidence(s)
		if must != "" && !h.words[must] {
			continue
		}
		n := 0
		for _, w := range words {
			switch {
			case !h.words[w] || skip[w]:
			case number(w):
				n += 4
			default:
				n += 2
			}
		}
		if slices.ContainsFunc(g.quotes, func(q quoted) bool { return h.has(q.text) }) {
			n++
		}
		if n > 0 && !seen[s] {
			seen[s] = true
			ss = append(ss, scored{i, n})
		}
	}
	return ss
}

// quotedWords are the key words of quoted values: what a goal is about,
// which most of the page mentions, not what it asks.
func quotedWords(qs []quoted) map[string]bool {
	m := map[string]bool{}
	for _, q := range qs {
		for _, w := range keywords(q.text) {
			m[w] = true
		}
	}
	return m
}

// best joins the best-scored lines, in page order, up to maxSummary:
// weak matches only dilute a strong one.
func best(ss []scored, lines []string) string {
	ss = slices.Clone(ss)
	slices.SortStableFunc(ss, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	top := ss[0].score
	var keep []int
	size := 0
	for _, s := range ss {
		if 2*s.score < top {
			break
		}
		n := len(lines[s.pos]) + 1
		if len(keep) > 0 && size+n > maxSummary {
			continue
		}
		keep = append(keep, s.pos)
		size += n
	}
	slices.Sort(keep)
	out := make([]string, len(keep))
	for i, p := range keep {
		out[i] = lines[p]
	}
	return cutText(strings.Join(out, " "), maxSummary)
}

// Words of an ask that pick one amount of several.
var (
	lowestWords  = wordSet(`cheapest lowest least smallest minimum`)
	highestWords = wordSet(`dearest priciest highest largest maximum`)
)

// superlative picks, of the lines that state an amount of money, the one
// with the lowest (cheapest, lowest) or highest (dearest, most expensive)
// when the ask asks for one.
func superlative(ask string, ss []scored, lines []string) (scored, bool) {
	f := terms(ask)
	low := slices.ContainsFunc(f, func(w string) bool { return lowestWords[w] })
	high := slices.ContainsFunc(f, func(w string) bool { return highestWords[w] }) ||
		strings.Contains(strings.ToLower(ask), "most expensive")
	if low == high {
		return scored{}, false
	}
	top := slices.MaxFunc(ss, func(a, b scored) int { return cmp.Compare(a.score, b.score) }).score
	var pick scored
	var at float64
	found := false
	for _, s := range ss {
		v, ok := amount(lines[s.pos])
		if !ok || 2*s.score < top {
			continue
		}
		if !found || low && v < at || high && v > at {
			pick, at, found = s, v, true
		}
	}
	return pick, found
}

// amount is the first amount of money a line states.
func amount(s string) (float64, bool) {
	m := money.FindString(s)
	if m == "" {
		return 0, false
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '.' {
			return r
		}
		return -1
	}, m)
	v, err := strconv.ParseFloat(strings.Trim(digits, "."), 64)
	return v, err == nil
}

// counted keeps, when the ask asks how many, the lines that count what
// it asks about: a number before one of its words ("4 pieces", "12
// members, 3 online").
func counted(ask string, asked []string, ss []scored, lines []string) ([]scored, bool) {
	a := strings.ToLower(ask)
	if !strings.Contains(a, "how many") && !strings.Contains(a, "number of") && !slices.Contains(terms(a), "count") {
		return nil, false
	}
	var out []scored
	for _, s := range ss {
		if countsOne(lines[s.pos], asked) {
			out = append(out, s)
		}
	}
	return out, len(out) > 0
}

// countsOne reports a line where a number stands just before one of words.
func countsOne(line string, words []string) bool {
	f := terms(line)
	for i := 0; i+1 < len(f); i++ {
		if number(f[i]) && slices.Contains(words, stem(f[i+1])) {
			return true
		}
	}
	return false
}

// money is an amount with its currency: "890 EUR", "$12.00", "€ 5".
var money = regexp.MustCompile(`(?i)\d[\d.,]*\s?(?:eur|usd|gbp|chf|nok|sek|dkk|jpy|kr)\b|[$€£¥]\s?\d[\d.,]*`)

// splitSentences cuts text at line ends and at . ! ? before a space.
func splitSentences(text string) []string {
	var out []string
	add := func(s string) {
		if s = strings.Join(strings.Fields(s), " "); strings.IndexFunc(s, isWordRune) >= 0 {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			add(text[start:i])
			start = i + 1
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t'):
			add(text[start : i+1])
			start = i + 1
		}
	}
	add(text[start:])
	return out
}
