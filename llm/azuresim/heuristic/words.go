package heuristic

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words.

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// terms splits s into lower-case runs of letters and digits.
func terms(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) })
}

// stem folds a plain plural onto its singular, so "results" finds "result".
func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

func wordSet(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

var (
	// stopWords carry no meaning of their own, on a page or in a goal.
	stopWords = wordSet(`the and for with from into onto that this these those then than its
		your you yours our ours their them they was were are has have had not but all any can
		will would should could may might must what which who whom whose when where why how
		there here out over under about after before again also just only very each some such
		own same too more most other via per please using use being been does did doing yet
		many much page http https www com org net html htm php aspx`)
	// actionWords say what to do rather than what to look for: they help
	// pick an element ("search") but a finished page need not show them.
	actionWords = wordSet(`search find open click press tap type enter fill select choose pick
		submit send navigate visit read check look return report tell add write scroll copy
		save summarize note show give list view browse follow get set put make complete
		go went create accept load filter sort buy sign subscribe register remove delete
		upload download confirm apply login pay book order purchase donate checkout`)
	// askWords open a step that reads something off the page ("report the
	// price") rather than one that does something on it ("add it to the cart").
	askWords = wordSet(`report tell find read check look return summarize note show give list
		view browse get copy count say describe see`)
	// clickWords open a step that only a click does; linkWords one that
	// follows a link.
	clickWords = wordSet(`open click press tap follow visit`)
	linkWords  = wordSet(`open follow visit`)
	// ownWords open a deed whose control bears the verb ("Pay", "Add to
	// cart", "Book now"): only a click on such a control does it, however
	// many of the step's other words the way there shares.
	ownWords = wordSet(`pay buy add book order purchase donate checkout`)
	// Verbs a step names its element by when it names nothing else.
	sendWords   = wordSet(`submit send confirm save`)
	chooseWords = wordSet(`select choose pick sort set`)
	typeWords   = wordSet(`type enter fill write search`)
	// genericWords are about the task, not its content.
	genericWords = wordSet(`site website goal step last action achieve achieved meant
		intended met succeed succeeded success work worked current now shown visible finished
		completed reached first second third next top result link button box field form
		answer question true false yes done one say`)
)

// keywords are the distinct stems of s's words that are longer than two
// letters (or are numbers: a size or a price is what tells two elements
// apart) and not stop words, in order of first use.
func keywords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range terms(s) {
		if (utf8.RuneCountInString(w) <= 2 && !number(w)) || stopWords[w] {
			continue
		}
		w = stem(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func number(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// content drops the action and generic words from keywords.
func content(kw []string) []string {
	var out []string
	for _, w := range kw {
		if !actionWords[w] && !genericWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// phrase normalises s for containment tests: stems joined by single
// spaces, so "Ada  Lovelace," and "ada lovelace" match and
// "ada@example.com" matches however it is punctuated around.
func phrase(s string) string {
	ts := terms(s)
	for i, w := range ts {
		ts[i] = stem(w)
	}
	return strings.Join(ts, " ")
}

// haystack answers whether a normalised phrase occurs in some texts.
type haystack struct {
	padded string // the texts' phrases between " | ", which no phrase spans
	words  map[string]bool
}

func newHaystack(texts ...string) haystack {
	h := haystack{words: map[string]bool{}}
	var b strings.Builder
	b.WriteString(" ")
	for _, t := range texts {
		p := phrase(t)
		b.WriteString(p)
		b.WriteString(" | ")
		for _, w := range strings.Fields(p) {
			h.words[w] = true
		}
	}
	h.padded = b.String()
	return h
}

func (h haystack) has(text string) bool {
	p := phrase(text)
	return p != "" && strings.Contains(h.padded, " "+p+" ")
}

// Quoted values.

// quoted is a value the goal quotes, with the key words around it that
// name the field it belongs in ("email" in `email "ada@example.com"`).
type quoted struct {
	text       string
	label      []string
	start, end int // byte span, quote marks included
}

// closers lists, for each opening quote mark, the marks that close it.
var closers = map[rune]string{'"': `"`, '\'': `'’`, '“': `”"`, '‘': `’'`}

// maxQuote bounds the search for a closing mark, keeping the scan linear;
// maxQuotes bounds how many values are read, since every rule compares
// each with the page.
const (
	maxQuote  = 500
	maxQuotes = 20
)

// quotes finds the values quoted in s. A quote mark opens only after a
// non-word character and closes only before one, so the apostrophe in
// "Ada's" is not a quote.
func quotes(s string) []quoted {
	var out []quoted
	for i := 0; i < len(s) && len(out) < maxQuotes; {
		if q, ok := placeholderAt(s, i); ok {
			out = append(out, q)
			i = q.end
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		cl, ok := closers[r]
		if prev, _ := utf8.DecodeLastRuneInString(s[:i]); !ok || (i > 0 && isWordRune(prev)) {
			i += n
			continue
		}
		end, m := -1, 0
		for j := i + n; j < len(s) && j-i < maxQuote; {
			c, k := utf8.DecodeRuneInString(s[j:])
			next, _ := utf8.DecodeRuneInString(s[j+k:])
			if strings.ContainsRune(cl, c) && (j+k == len(s) || !isWordRune(next)) {
				end, m = j, k
				break
			}
			j += k
		}
		if end < 0 {
			i += n
			continue
		}
		if text := strings.TrimSpace(s[i+n : end]); strings.IndexFunc(text, isWordRune) >= 0 {
			out = append(out, quoted{text: text, label: label(s, i, end+m), start: i, end: end + m})
		}
		i = end + m
	}
	return out
}

// label reads the few words before a quoted value, back to the clause's
// start ("name" in `form: name "Ada"`), and those after it that follow
// "into", "in" or "as" ("message box" in `"hi" into the message box`).
// placeholderAt reads a secret's placeholder at s[i:], <secret:NAME>: a
// value to type like a quoted one, labelled by its name's words too
// ("portal_password" is a password), since its value is never shown.
func placeholderAt(s string, i int) (quoted, bool) {
	const open = "<secret:"
	if !strings.HasPrefix(s[i:], open) {
		return quoted{}, false
	}
	n := strings.IndexByte(s[i:], '>')
	if n < 0 || n > 64+len(open) {
		return quoted{}, false
	}
	name := s[i+len(open) : i+n]
	if name == "" || strings.ContainsAny(name, " <") {
		return quoted{}, false
	}
	end := i + n + 1
	lab := append(keywords(strings.ReplaceAll(name, "_", " ")), label(s, i, end)...)
	return quoted{text: s[i:end], label: lab, start: i, end: end}, true
}

func label(s string, start, end int) []string {
	const marks = ",;:.!?()\n\"'“”‘’"
	before := s[:start]
	if i := strings.LastIndexAny(before, marks); i >= 0 {
		before = before[i+1:]
	}
	f := strings.Fields(before)
	f = f[max(0, len(f)-3):]
	after := s[end:]
	if i := strings.IndexAny(after, marks); i >= 0 {
		after = after[:i]
	}
	if g := strings.Fields(after); len(g) > 1 {
		switch strings.ToLower(g[0]) {
		case "into", "in", "as", "under":
			f = append(f, g[1:min(len(g), 4)]...)
		}
	}
	return keywords(strings.Join(f, " "))
}

// searchPhrases find what a goal without quotes asks to search for, most
// specific first: "search for X", "look up X", "for X", "search X".
var searchPhrases = func() []*regexp.Regexp {
	const stop = `(?:[,;!?\n]|\.(?:\s|$)|\s+(?:and|then|on|in|at|with|from|using|by|to|into)\b|$)`
	var out []*regexp.Regexp
	for _, lead := range []string{`(?:search|look)\s+for`, `look\s+up`, `for`, `search`} {
		out = append(out, regexp.MustCompile(`(?i)\b`+lead+`\s+(.+?)\s*`+stop))
	}
	return out
}()

// searchPhrase is the goal's "search for X" text, or "".
func searchPhrase(goal string) string {
	goal = cutText(goal, 2000)
	for _, re := range searchPhrases {
		for _, m := range re.FindAllStringSubmatch(goal, -1) {
			t := strings.TrimSpace(m[1])
			for _, article := range []string{"a ", "an ", "the ", "some "} {
				if len(t) > len(article) && strings.EqualFold(t[:len(article)], article) {
					t = strings.TrimSpace(t[len(article):])
				}
			}
			t = strings.TrimRight(t, ".:")
			if len(content(keywords(t))) > 0 { // "search box" names a field, not a search
				return cutText(t, 80)
			}
		}
	}
	return ""
}

// goalInfo is what the rules read from a goal.
type goalInfo struct {
	quotes  []quoted
	search  string          // the "search for X" text when nothing is quoted
	words   map[string]bool // key words, for scoring elements
	content []string        // key words a finished page shows
}

func readGoal(goal string) goalInfo {
	g := goalInfo{quotes: quotes(goal), words: map[string]bool{}}
	if len(g.quotes) == 0 {
		g.search = searchPhrase(goal)
	}
	kw := keywords(goal)
	for _, w := range kw {
		g.words[w] = true
	}
	g.content = content(kw)
	return g
}

// targets are what the goal looks for: its quoted values, or its search text.
func (g goalInfo) targets() []string {
	var out []string
	for _, q := range g.quotes {
		out = append(out, q.text)
	}
	if len(out) == 0 && g.search != "" {
		out = append(out, g.search)
	}
	return out
}
