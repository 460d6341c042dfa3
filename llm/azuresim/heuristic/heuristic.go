// Package heuristic is an offline stand-in for a model that answers the
// built-in call types from their input; see Model.
package heuristic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Model is an offline stand-in for a model, for demos and tests that
// run without Azure. It is not a model and understands nothing: it answers
// the built-in call types of package calltypes with fixed rules that match
// the words of the goal against the page in the call's input, so the same
// call always gets the same answer. That carries an agent through simple
// recorded tasks (search and open a result, fill in a form) and little more.
//
// The call type is the json_schema name of the call's response_format:
// "planning", "click-pick", "yes-no" or "summarize". The input is the last
// user message, the type's input as JSON. The answer is always valid JSON
// of the type's answer: a cautious one when the input cannot be read, and
// with its prose shortened when that makes it fit the call's cap, since a
// cut answer would not parse. Calls of any other type get the last user
// message back, as from azuresim.Echo.
//
// Key words are a text's words of three letters or more, less stop words,
// lower-cased, with plain plurals folded ("results" is "result"). A goal's
// last deed is its last plan step that does something on the page ("add
// it to the cart"), past any that only read something off it ("report
// the price"); an action did it when the element acted on (or the text
// typed) shares a word with it besides the goal's targets, and is a click
// when the step opens, clicks or presses (on a link when it names
// nothing to open: "open the first one").
//
//   - planning splits the goal (or a plain-text message) at "then", commas,
//     semicolons, sentence ends and "and" before a verb, never inside
//     quotes, into one to five steps of at most 100 bytes.
//   - click-pick scores each enabled element by the key words its name,
//     placeholder, value, link path and type share with the goal and the
//     current plan step. Text boxes and dropdowns the goal quotes a value
//     for (matched by the word before the value, "email" in `email "a@b.c"`),
//     or gives a "search for X" phrase for, score a point more and are
//     filled top to bottom, ahead of any click while a field the goal
//     names is empty; a search just typed is sent with the first button
//     after its box. Buttons score half a point more once every such field
//     holds its value, and links naming the goal's target a point more
//     once a field holds it (the search was made); anything else is
//     clicked. Ties go to the lower index, and the last action in the
//     history is not repeated while another element matches. It answers
//     done when the history holds a click, typing or selection but does
//     not end in typing or selecting (a form still to send) nor short of
//     the goal's last deed, and the page shows 60% of the goal's quoted
//     values or all its key words, unless a link to the goal's target is
//     still to be opened. With nothing matching, it
//     follows a link that reads as leading on to more of the same ("next
//     page", "older posts", "skip ahead"), else answers done after acting,
//     else scrolls down once, then gives up. A step that went to another
//     page does not count as the action to avoid repeating: the same index
//     there is another element.
//   - yes-no answers false to a question about the goal, asked after an
//     action, when that action did not do the goal's last deed. Otherwise
//     it answers true when the page (title, text, element names and
//     values) shows all the values the question quotes or, when it quotes
//     none, 60% of those the goal and last action quote and 60% of the
//     question's key words (the goal's when there is nothing else to look
//     for).
//   - summarize answers with the sentences of the page that share the
//     most key words with the goal's last step when that step asks for
//     something and other steps come before it ("…, then report the
//     price"), and hold its first (what it asks for), else with the goal,
//     up to about 400 bytes; a sentence with an amount of money counts as
//     saying "price". The notes count only when the page has no such
//     sentence, and the page title answers when neither has.
type Model struct{}

// The built-in call types' names, as their schemas are named.
const (
	callPlanning  = "planning"
	callClickPick = "click-pick"
	callYesNo     = "yes-no"
	callSummarize = "summarize"
)

// unreadable is the reason given when the input is not the type's input.
const unreadable = "could not read the page"

// Reply answers r; see Model.
func (Model) Reply(r azuresim.Request) string {
	msg := strings.ToValidUTF8(azuresim.Echo{}.Reply(r), "\uFFFD")
	switch callType(r.ResponseFormat) {
	case callPlanning:
		goal := msg
		if in, ok := decodeInput[calltypes.PlanInput](msg); ok {
			goal = in.Goal
		} else if looksLikeJSON(msg) {
			goal = ""
		}
		p := plan(goal)
		return fit(r.MaxTokens, &p, func() bool {
			if len(p.Steps) > 1 {
				p.Steps = p.Steps[:len(p.Steps)-1]
				return true
			}
			short := p.Steps[0]
			if !shorten(&short)() || short == "" {
				return false
			}
			p.Steps[0] = short
			return true
		})
	case callClickPick:
		a := calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: unreadable}
		if in, ok := decodeInput[calltypes.PickInput](msg); ok {
			a = pick(in)
		}
		return fit(r.MaxTokens, &a, shorten(&a.Reason))
	case callYesNo:
		v := calltypes.Verdict{Reason: unreadable}
		if in, ok := decodeInput[calltypes.CheckInput](msg); ok {
			v = check(in)
		}
		return fit(r.MaxTokens, &v, shorten(&v.Reason))
	case callSummarize:
		s := calltypes.Summary{Answer: unreadable}
		if in, ok := decodeInput[calltypes.SummaryInput](msg); ok {
			s = summarize(in)
		}
		return fit(r.MaxTokens, &s, shorten(&s.Answer))
	default:
		// A type of the user's own: the least answer its schema allows,
		// so the type's path (request, schema, parse) runs offline.
		if v, ok := leastOf(schemaOf(r.ResponseFormat)); ok {
			b, _ := json.Marshal(v)
			return string(b)
		}
		return azuresim.Echo{}.Reply(r)
	}
}

// schemaOf is the JSON schema in a response_format, chat or Responses
// shape.
func schemaOf(raw json.RawMessage) map[string]any {
	var f struct {
		Schema     map[string]any `json:"schema"`
		JSONSchema struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	if f.JSONSchema.Schema != nil {
		return f.JSONSchema.Schema
	}
	return f.Schema
}

// leastOf is the smallest value a strict schema accepts: every required
// property, empty arrays and strings, zeros, false, an enum's first value.
func leastOf(s map[string]any) (any, bool) {
	if s == nil {
		return nil, false
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if c, ok := s["const"]; ok {
		return c, true
	}
	if alts, ok := s["anyOf"].([]any); ok && len(alts) > 0 {
		a, _ := alts[0].(map[string]any)
		return leastOf(a)
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			v, ok := leastOf(ps)
			if !ok {
				return nil, false
			}
			out[name] = v
		}
		return out, true
	case "array":
		return []any{}, true
	case "string":
		return "", true
	case "number", "integer":
		return 0, true
	case "boolean":
		return false, true
	case "null":
		return nil, true
	}
	return nil, false
}

// callType is the schema name in a response_format, in the chat shape
// ({"json_schema":{"name":…}}) or the Responses one ({"name":…}).
func callType(raw json.RawMessage) string {
	var f struct {
		Name       string `json:"name"`
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return ""
	}
	return cmp.Or(f.JSONSchema.Name, f.Name)
}

// decodeInput reads a call's input. Prompts sometimes wrap the JSON in a
// sentence or a code fence, so the outermost braces get a second chance.
func decodeInput[T any](msg string) (T, bool) {
	var v T
	if json.Unmarshal([]byte(msg), &v) == nil {
		return v, true
	}
	i, j := strings.IndexByte(msg, '{'), strings.LastIndexByte(msg, '}')
	if i < 0 || j <= i {
		return v, false
	}
	var w T
	if json.Unmarshal([]byte(msg[i:j+1]), &w) != nil {
		return v, false
	}
	return w, true
}

func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// fit encodes v, shrinking it while the encoding is longer than the call's
// cap and shrink can still do something: a short answer that parses beats
// a long one the simulator cuts.
func fit(limit int64, v any, shrink func() bool) string {
	for {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			// Not reached: the answers are plain structs of strings.
			return "{}"
		}
		out := strings.TrimSuffix(b.String(), "\n")
		if limit <= 0 || int64(tokens.Count(out)) <= limit || !shrink() {
			return out
		}
	}
}

// shorten drops the last word of *s each call (halves it when it has no
// spaces), down to nothing.
func shorten(s *string) func() bool {
	return func() bool {
		if *s == "" {
			return false
		}
		t := strings.TrimSpace(*s)
		switch i := strings.LastIndexByte(t, ' '); {
		case i > 0:
			*s = strings.TrimRight(t[:i], " ,;:")
		case len(t) > 16:
			*s = cutText(t, len(t)/2)
		default:
			*s = ""
		}
		return true
	}
}

// cutText cuts s to at most n bytes, at a word boundary when one is near.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if j := strings.LastIndexByte(s[:i], ' '); j > n/2 {
		i = j
	}
	return strings.TrimRightFunc(s[:i], func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' })
}

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
		upload download confirm apply login`)
	// askWords open a step that reads something off the page ("report the
	// price") rather than one that does something on it ("add it to the cart").
	askWords = wordSet(`report tell find read check look return summarize note show give list
		view browse get copy count say describe see`)
	// clickWords open a step that only a click does; linkWords one that
	// follows a link.
	clickWords = wordSet(`open click press tap follow visit`)
	linkWords  = wordSet(`open follow visit`)
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
			if len(keywords(t)) > 0 {
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

// Elements.

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func isSelect(e calltypes.Element) bool {
	return lower(e.Tag) == "select" || lower(e.Role) == "listbox"
}

func isTextInput(e calltypes.Element) bool {
	if isSelect(e) {
		return false
	}
	switch lower(e.Tag) {
	case "textarea":
		return true
	case "input":
		switch lower(e.Type) {
		case "", "text", "search", "email", "tel", "url", "password", "number":
			return true
		}
		return false
	}
	switch lower(e.Role) {
	case "textbox", "searchbox", "combobox":
		return true
	}
	return false
}

// usable elements can be acted on: enabled, with an index to name them by.
func usable(e calltypes.Element) bool { return !e.Disabled && e.Index >= 0 }

func isLink(e calltypes.Element) bool { return lower(e.Tag) == "a" || lower(e.Role) == "link" }

// onwardWords name a way on through a list or an archive.
var onwardWords = wordSet(`next more older newer continue ahead forward further following other another skip`)

// onward reports a link that reads as leading on to more of the same:
// "Next page", "Older posts", "Skip ahead", "›".
func onward(e calltypes.Element) bool {
	name := strings.TrimSpace(e.Name)
	if name == "›" || name == "»" || name == "→" || name == ">" {
		return true
	}
	for _, w := range terms(name) {
		if onwardWords[w] {
			return true
		}
	}
	return false
}

func isSearchBox(e calltypes.Element) bool {
	return isTextInput(e) && (lower(e.Type) == "search" || lower(e.Role) == "searchbox")
}

// sendSearch is the click that sends a search just typed: the first
// button after the box, where a form keeps its own ("Go", "Search", a
// magnifier), whatever it is called.
func sendSearch(els []calltypes.Element, last calltypes.Taken) (calltypes.Action, bool) {
	if last.Action.Kind != calltypes.ActType || last.Action.Submit || strings.HasPrefix(last.Outcome, "navigated") {
		return calltypes.Action{}, false
	}
	box := slices.IndexFunc(els, func(e calltypes.Element) bool { return e.Index == last.Action.Index })
	if box < 0 || !isSearchBox(els[box]) || !newHaystack(els[box].Value).has(last.Action.Text) {
		return calltypes.Action{}, false
	}
	for _, e := range els[box+1:] {
		if usable(e) && !e.Hidden && isButton(e) {
			return calltypes.Action{Kind: calltypes.ActClick, Index: e.Index, Reason: "send the search with the " + describe(e)}, true
		}
	}
	return calltypes.Action{}, false
}

// namesTarget reports an element whose name holds one of the goal's targets.
func namesTarget(e calltypes.Element, targets []string) bool {
	name := newHaystack(e.Name)
	for _, t := range targets {
		if name.has(t) {
			return true
		}
	}
	return false
}

func isButton(e calltypes.Element) bool {
	if lower(e.Tag) == "button" || lower(e.Role) == "button" {
		return true
	}
	if lower(e.Tag) == "input" {
		switch lower(e.Type) {
		case "submit", "button", "image":
			return true
		}
	}
	return false
}

// elementWords are the stems an element is matched on. Of a link's
// address only the path counts: hosts and query strings ("?q=blue+widget"
// on every result and pager link) would make links match alike.
func elementWords(e calltypes.Element) []string {
	href := e.Href
	if u, err := url.Parse(href); err == nil {
		href = u.Path
	} else if i := strings.IndexAny(href, "?#"); i >= 0 {
		href = href[:i]
	}
	return keywords(strings.Join([]string{e.Name, e.Placeholder, e.Value, href, e.Type}, " "))
}

// fieldWords name what a field is for, leaving out what it holds.
func fieldWords(e calltypes.Element) []string {
	w := keywords(strings.Join([]string{e.Name, e.Placeholder, e.Type}, " "))
	if lower(e.Role) == "searchbox" {
		w = append(w, "search")
	}
	return w
}

// describe names an element for a reason: its kind and its text.
func describe(e calltypes.Element) string {
	kind := "element"
	switch {
	case isSelect(e):
		kind = "dropdown"
	case isSearchBox(e):
		kind = "search box"
	case isTextInput(e):
		kind = "text box"
	case isLink(e):
		kind = "link"
	case isButton(e):
		kind = "button"
	case lower(e.Type) == "checkbox" || lower(e.Type) == "radio":
		kind = lower(e.Type)
	}
	for _, s := range []string{e.Name, e.Placeholder, e.Value, e.Href} {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			return fmt.Sprintf("%s %q", kind, cutText(s, 40))
		}
	}
	return fmt.Sprintf("%s #%d", kind, e.Index)
}

// fill is what a text box or dropdown should hold for the goal.
type fill struct {
	text    string
	ok      bool
	settled bool // it holds it already
}

// assign decides which quoted value (or search text) goes into which text
// box or dropdown: one already holding it keeps it; then the field whose
// name shares a word with the value's label; then the first free text box,
// search boxes first. A dropdown the goal quotes nothing for takes the
// word after its name in the goal ("topic Billing").
func assign(els []calltypes.Element, g goalInfo, goal string) []fill {
	type value struct {
		text  string
		label []string
	}
	var values []value
	for _, q := range g.quotes {
		values = append(values, value{q.text, q.label})
	}
	if len(values) == 0 && g.search != "" {
		values = append(values, value{g.search, []string{"search"}})
	}
	fills := make([]fill, len(els))
	held := make([]haystack, len(els))
	names := make([][]string, len(els))
	for p, e := range els {
		if isTextInput(e) || isSelect(e) {
			held[p], names[p] = newHaystack(e.Value), fieldWords(e)
		}
	}
	fillable := func(p int) bool {
		return usable(els[p]) && !fills[p].ok && (isTextInput(els[p]) || isSelect(els[p]))
	}
	used := make([]bool, len(values))
	for i, v := range values {
		for p := range els {
			if fillable(p) && held[p].has(v.text) {
				fills[p], used[i] = fill{text: v.text, ok: true, settled: true}, true
				break
			}
		}
	}
	for i, v := range values {
		if used[i] || len(v.label) == 0 {
			continue
		}
		best, bestN := -1, 0
		for p := range els {
			if !fillable(p) {
				continue
			}
			if n := overlap(v.label, names[p]); n > bestN {
				best, bestN = p, n
			}
		}
		if best >= 0 {
			fills[best], used[i] = fill{text: v.text, ok: true}, true
		}
	}
	// Free text boxes, the likeliest home for a search first.
	var free []int
	for p := range els {
		if fillable(p) && isTextInput(els[p]) {
			free = append(free, p)
		}
	}
	rank := func(p int) int {
		switch t := lower(els[p].Type); {
		case t == "search" || lower(els[p].Role) == "searchbox":
			return 0
		case t == "" || t == "text" || lower(els[p].Tag) == "textarea":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(free, func(a, b int) int { return cmp.Compare(rank(a), rank(b)) })
	for i, v := range values {
		if used[i] || len(free) == 0 {
			continue
		}
		fills[free[0]], used[i] = fill{text: v.text, ok: true}, true
		free = free[1:]
	}
	for p := range els {
		if fillable(p) && isSelect(els[p]) {
			if opt := optionAfter(goal, names[p]); opt != "" {
				fills[p] = fill{text: opt, ok: true, settled: phrase(els[p].Value) == phrase(opt)}
			}
		}
	}
	return fills
}

func overlap(a, b []string) int {
	n := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			n++
		}
	}
	return n
}

// optionAfter is the goal's word after one of a dropdown's words, past
// joining words: "Billing" in "topic: Billing", "France" in "country to France".
func optionAfter(goal string, names []string) string {
	f := strings.Fields(cutText(goal, 2000))
	trim := func(s string) string { return strings.TrimFunc(s, func(r rune) bool { return !isWordRune(r) }) }
	for i, w := range f {
		if !slices.Contains(names, stem(strings.ToLower(trim(w)))) {
			continue
		}
		for _, next := range f[i+1:] {
			t := trim(next)
			switch strings.ToLower(t) {
			case "", "to", "as", "is", "by", "of", "be":
				continue
			}
			if stopWords[strings.ToLower(t)] || len(keywords(t)) == 0 {
				break
			}
			return t
		}
	}
	return ""
}

// History.

// repeats reports whether a is the action t took, on the same page: after
// a step that went to another page, its indexes name other elements.
func repeats(a calltypes.Action, t calltypes.Taken) bool {
	if a.Kind != t.Action.Kind || a.Index != t.Action.Index || strings.HasPrefix(t.Outcome, "navigated") {
		return false
	}
	if a.Kind == calltypes.ActType || a.Kind == calltypes.ActSelect {
		return phrase(t.Action.Text) == phrase(a.Text)
	}
	return true
}

// Click-pick.

// pick chooses the next action; see Model.
func pick(in calltypes.PickInput) calltypes.Action {
	g := readGoal(in.Goal)
	stepWords := map[string]bool{}
	if in.Step >= 0 && in.Step < len(in.Plan) {
		for _, w := range keywords(in.Plan[in.Step]) {
			stepWords[w] = true
		}
	}
	acted := false
	for _, h := range in.History {
		switch h.Action.Kind {
		case calltypes.ActClick, calltypes.ActType, calltypes.ActSelect:
			acted = true
		}
	}
	last := calltypes.Taken{Action: calltypes.Action{Index: -1}}
	if len(in.History) > 0 {
		last = in.History[len(in.History)-1]
	}
	els := in.Page.Elements
	if why, ok := finished(in.Page, g, in.Goal, acted, last); ok {
		return calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: why}
	}

	if a, ok := sendSearch(els, last); ok {
		return a
	}
	fills := assign(els, g, in.Goal)
	targets := g.targets()
	pending, settled := false, false
	for _, f := range fills {
		pending = pending || (f.ok && !f.settled)
		settled = settled || f.settled
	}
	type cand struct {
		pos   int
		score float64
	}
	var cands []cand
	fillScore := 0.0
	named := false // a field the goal names is still to fill
	for p, e := range els {
		if !usable(e) || fills[p].settled {
			continue // nothing to do with it
		}
		s := 0.0
		for _, w := range elementWords(e) {
			if g.words[w] {
				s++
			}
			if stepWords[w] {
				s++
			}
		}
		switch {
		case fills[p].ok:
			s++ // fill the fields before pressing anything
			fillScore = max(fillScore, s)
			named = named || slices.ContainsFunc(fieldWords(e), func(w string) bool { return g.words[w] })
		case isButton(e) && settled && !pending:
			s += 0.5 // the form is filled: send it
		case isLink(e) && settled && namesTarget(e, targets):
			s++ // a result for what was searched: open it
		}
		if s > 0 {
			cands = append(cands, cand{p, s})
		}
	}
	// A form is filled before it is sent: while a field the goal names is
	// empty, the fields outrank every click, whatever the plan step says.
	if named {
		for _, c := range cands {
			fillScore = max(fillScore, c.score+1)
		}
	}
	// Fields to fill rank alike, so they are filled top to bottom.
	for i, c := range cands {
		if fills[c.pos].ok {
			cands[i].score = fillScore
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(els[a.pos].Index, els[b.pos].Index))
	})
	act := func(c cand) calltypes.Action {
		e, f := els[c.pos], fills[c.pos]
		switch {
		case f.ok && isSelect(e):
			return calltypes.Action{Kind: calltypes.ActSelect, Index: e.Index, Text: f.text,
				Reason: fmt.Sprintf("choose %q in the %s", cutText(f.text, 30), describe(e))}
		case f.ok:
			return calltypes.Action{Kind: calltypes.ActType, Index: e.Index, Text: f.text,
				Reason: "fill the " + describe(e)}
		}
		return calltypes.Action{Kind: calltypes.ActClick, Index: e.Index,
			Reason: "the " + describe(e) + " best matches the goal"}
	}
	for _, c := range cands {
		// Doing again what was just done rarely helps when anything else
		// matches at all.
		if a := act(c); !repeats(a, last) {
			return a
		}
	}
	if len(cands) > 0 {
		return act(cands[0])
	}
	// Nothing here matches: a link to more of the same (the next page of
	// a list, an archive's older entries) may lead to what does.
	for _, e := range els {
		a := calltypes.Action{Kind: calltypes.ActClick, Index: e.Index, Reason: "nothing here matches the goal; the " + describe(e) + " may lead to more"}
		if usable(e) && !e.Hidden && isLink(e) && onward(e) && !repeats(a, last) {
			return a
		}
	}
	switch {
	case acted:
		return calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: "nothing else on the page matches the goal"}
	case last.Action.Kind == calltypes.ActScroll:
		return calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: "nothing on the page matches the goal"}
	}
	return calltypes.Action{Kind: calltypes.ActScroll, Index: -1, Text: "down", Reason: "nothing in view matches the goal"}
}

// enough is the share of what was looked for that counts as found: 60%,
// so one or two values must all be there, but a confirmation page need
// not repeat every value of a form.
func enough(found, total int) bool { return 10*found >= 6*total }

// finished says whether the goal looks met: something was clicked, typed
// or selected, the last step was not a half-filled form nor short of the
// goal's last deed (see did), and the page
// shows enough of the goal's quoted values, or all its key words. A link that
// leads to the goal's target, on a page whose title does not name it, is
// a list of results still to open, not the end.
func finished(pg calltypes.Page, g goalInfo, goal string, acted bool, last calltypes.Taken) (string, bool) {
	switch k := last.Action.Kind; {
	case !acted, k == calltypes.ActType && !last.Action.Submit, k == calltypes.ActSelect:
		return "", false
	}
	if step := lastDeed(goal); step != "" && !did(step, last, g.targets()) {
		return "", false
	}
	hay := newHaystack(pg.Title, pg.Text)
	why := ""
	if len(g.quotes) > 0 {
		var shown []string
		for _, q := range g.quotes {
			if hay.has(q.text) {
				shown = append(shown, q.text)
			}
		}
		if len(shown) > 0 && enough(len(shown), len(g.quotes)) {
			why = fmt.Sprintf("the page shows %q", cutText(shown[0], 40))
		}
	}
	if why == "" && len(g.content) > 0 {
		all := true
		for _, w := range g.content {
			all = all && hay.words[w]
		}
		if all {
			why = "the page shows every key word of the goal"
		}
	}
	if why == "" {
		return "", false
	}
	targets := g.targets()
	title := newHaystack(pg.Title)
	for _, t := range targets {
		if title.has(t) {
			return why, true
		}
	}
	for _, e := range pg.Elements {
		if e.Disabled || !isLink(e) {
			continue
		}
		name := newHaystack(e.Name)
		for _, t := range targets {
			if name.has(t) {
				return "", false
			}
		}
	}
	return why, true
}

// Yes-no.

// check answers a yes/no question; see Model.
func check(in calltypes.CheckInput) calltypes.Verdict {
	// Asked about the goal right after an action: a goal that ends in
	// doing something is not met before that was done, whatever the page
	// already shows (the product's name, the button still to press).
	if in.LastAction != nil && slices.Contains(terms(in.Question), "goal") {
		if step := lastDeed(in.Goal); step != "" && !did(step, *in.LastAction, readGoal(in.Goal).targets()) {
			return calltypes.Verdict{Answer: false, Reason: fmt.Sprintf("%q is still to do", cutText(step, 40))}
		}
	}
	parts := []string{in.Page.Title, in.Page.Text}
	for _, e := range in.Page.Elements {
		parts = append(parts, e.Name, e.Placeholder, e.Value)
	}
	hay := newHaystack(parts...)

	// Values the question quotes decide alone, and must all be there.
	// Otherwise enough of the goal's and the last action's must be, and
	// the question's own key words are counted too.
	own := quotes(in.Question)
	src := own
	if len(own) == 0 {
		src = quotes(in.Goal)
		if in.LastAction != nil && in.LastAction.Action.Text != "" {
			src = append(src, quoted{text: in.LastAction.Action.Text})
		}
	}
	var phrases []string
	for _, q := range src {
		if !slices.ContainsFunc(phrases, func(p string) bool { return phrase(p) == phrase(q.text) }) {
			phrases = append(phrases, q.text)
		}
	}
	var shown, lacking []string
	for _, p := range phrases {
		if hay.has(p) {
			shown = append(shown, p)
		} else {
			lacking = append(lacking, p)
		}
	}
	if len(own) > 0 {
		if len(lacking) > 0 {
			return calltypes.Verdict{Answer: false, Reason: fmt.Sprintf("the page lacks %q", cutText(lacking[0], 40))}
		}
		return calltypes.Verdict{Answer: true, Reason: fmt.Sprintf("the page shows %q", cutText(shown[0], 40))}
	}
	if len(phrases) > 0 && !enough(len(shown), len(phrases)) {
		return calltypes.Verdict{Answer: false, Reason: fmt.Sprintf("the page lacks %q", cutText(lacking[0], 40))}
	}
	kw := content(keywords(in.Question))
	if len(kw) == 0 && len(phrases) == 0 {
		kw = content(keywords(in.Goal))
	}
	if len(kw) == 0 {
		if len(phrases) == 0 {
			return calltypes.Verdict{Answer: false, Reason: "nothing to look for on the page"}
		}
		return calltypes.Verdict{Answer: true, Reason: fmt.Sprintf("the page shows %q", cutText(shown[0], 40))}
	}
	var found, missing []string
	for _, w := range kw {
		if hay.words[w] {
			found = append(found, w)
		} else {
			missing = append(missing, w)
		}
	}
	list := func(ws []string) string { return strings.Join(ws[:min(len(ws), 3)], ", ") }
	if enough(len(found), len(kw)) {
		if len(missing) == 0 {
			return calltypes.Verdict{Answer: true, Reason: "found " + list(found)}
		}
		return calltypes.Verdict{Answer: true, Reason: fmt.Sprintf("found %d of %d key words", len(found), len(kw))}
	}
	return calltypes.Verdict{Answer: false, Reason: "missing " + list(missing)}
}

// Summarize.

// maxSummary is about how long a summary gets, in bytes.
const maxSummary = 400

// summarize answers with the page's best-matching sentences; see Model.
func summarize(in calltypes.SummaryInput) calltypes.Summary {
	g := readGoal(in.Goal)
	sentences := splitSentences(in.Page.Text)
	onPage := len(sentences)
	for _, n := range in.Notes {
		sentences = append(sentences, splitSentences(n)...)
	}
	// A quoted value names what the goal is about, which most of the page
	// mentions; the other words say what it asks, and weigh more.
	inQuotes := func(qs []quoted) map[string]bool {
		m := map[string]bool{}
		for _, q := range qs {
			for _, w := range keywords(q.text) {
				m[w] = true
			}
		}
		return m
	}
	type scored struct {
		pos, score int
	}
	score := func(sentences []string, words []string, skip map[string]bool, must string) ([]scored, int) {
		var ss []scored
		best := 0
		seen := map[string]bool{}
		for i, s := range sentences {
			h := sentenceWords(s)
			if must != "" && !h.words[must] {
				continue
			}
			n := 0
			for _, w := range words {
				if h.words[w] && !skip[w] {
					n += 2
				}
			}
			if slices.ContainsFunc(g.quotes, func(q quoted) bool { return h.has(q.text) }) {
				n++
			}
			if n > 0 && !seen[s] {
				seen[s] = true
				ss = append(ss, scored{i, n})
				best = max(best, n)
			}
		}
		return ss, best
	}
	// A goal that ends "…, then report the price" asks for the price: the
	// words of that last step count alone when the page has them, and the
	// whole goal's otherwise. The page is the answer; the notes of earlier
	// steps only stand in for a page that says nothing to the goal.
	// The step's first such word is what it asks for ("price" in "report
	// the price of the cheapest desk"): a sentence without it does not
	// answer.
	ask := lastAsk(in.Goal)
	asked := content(keywords(ask))
	var ss []scored
	best := 0
	for _, src := range [][]string{sentences[:onPage], sentences} {
		if len(asked) > 0 {
			if ss, best = score(src, asked, inQuotes(quotes(ask)), asked[0]); len(ss) > 0 {
				break
			}
		}
		if ss, best = score(src, g.content, inQuotes(g.quotes), ""); len(ss) > 0 {
			break
		}
	}
	if len(ss) == 0 {
		if t := strings.Join(strings.Fields(in.Page.Title), " "); t != "" {
			return calltypes.Summary{Answer: cutText(t, maxSummary)}
		}
		return calltypes.Summary{Answer: "nothing on the page matches the goal"}
	}
	slices.SortStableFunc(ss, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	var keep []int
	size := 0
	for _, s := range ss {
		// Weak matches only dilute a strong one.
		if 2*s.score < best {
			break
		}
		n := len(sentences[s.pos]) + 1
		if len(keep) > 0 && size+n > maxSummary {
			continue
		}
		keep = append(keep, s.pos)
		size += n
	}
	slices.Sort(keep)
	out := make([]string, len(keep))
	for i, p := range keep {
		out[i] = sentences[p]
	}
	return calltypes.Summary{Answer: cutText(strings.Join(out, " "), maxSummary)}
}

// money is an amount with its currency: "890 EUR", "$12.00", "€ 5".
var money = regexp.MustCompile(`(?i)\d[\d.,]*\s?(?:eur|usd|gbp|chf|nok|sek|dkk|jpy|kr)\b|[$€£¥]\s?\d`)

// sentenceWords is a sentence as a haystack; one that states an amount
// of money also answers for "price" and "cost", which it seldom says.
func sentenceWords(s string) haystack {
	h := newHaystack(s)
	if money.MatchString(s) {
		h.words["price"], h.words["cost"] = true, true
	}
	return h
}

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

// Planning.

// maxSteps and maxStep bound a plan: a few short steps.
const (
	maxSteps = 5
	maxStep  = 100
)

// planConnectors open a step without saying anything.
var planConnectors = wordSet("then and finally next also afterwards first lastly")

// plan splits a goal into steps at "then", commas, semicolons, line and
// sentence ends, and "and" before a verb (not in "black and white"),
// leaving quoted values whole.
func plan(goal string) calltypes.Plan {
	goal = strings.TrimSpace(goal)
	spans := quotes(goal)
	var parts []string
	start := 0
	cut := func(i, skip int) {
		parts = append(parts, goal[start:i])
		start = i + skip
	}
	for i := 0; i < len(goal); i++ {
		if len(spans) > 0 && i >= spans[0].start {
			i = spans[0].end - 1
			spans = spans[1:]
			continue
		}
		switch c := goal[i]; {
		case c == ',' || c == ';' || c == '\n':
			cut(i, 1)
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(goal) || goal[i+1] == ' ' || goal[i+1] == '\n'):
			cut(i, 1)
		case hasPrefixFold(goal[i:], " then "):
			cut(i, 5)
			i += 4
		case hasPrefixFold(goal[i:], " and ") && startsWithVerb(goal[i+5:]):
			cut(i, 4)
			i += 3
		}
	}
	parts = append(parts, goal[start:])

	var steps []string
	for _, p := range parts {
		if p = cleanStep(p); p != "" {
			steps = append(steps, p)
		}
	}
	if len(steps) > maxSteps {
		steps[maxSteps-1] = strings.Join(steps[maxSteps-1:], ", ")
		steps = steps[:maxSteps]
	}
	for i, s := range steps {
		steps[i] = cutText(s, maxStep)
	}
	if len(steps) == 0 {
		steps = []string{"Read the page and work toward the goal"}
	}
	return calltypes.Plan{Steps: steps}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func startsWithVerb(s string) bool {
	f := strings.Fields(cutText(s, 40))
	return len(f) > 0 && actionWords[strings.ToLower(f[0])]
}

// cleanStep trims a piece of a goal to a step: no leading "then" or "and",
// a capital first letter, at least one word.
func cleanStep(s string) string {
	for {
		s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ':' || r == '-' })
		f := strings.Fields(s)
		if len(f) < 2 || !planConnectors[strings.ToLower(f[0])] {
			break
		}
		s = s[len(f[0]):]
	}
	if strings.IndexFunc(s, isWordRune) < 0 {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Deeds.

// lastDeed is the goal's last step that does something on the page ("add
// it to the cart") rather than reads something off it ("report the
// price"), or "" when the goal's last steps say neither.
func lastDeed(goal string) string {
	steps := plan(goal).Steps
	for i := len(steps) - 1; i >= 0; i-- {
		switch f := terms(steps[i]); {
		case len(f) == 0:
		case askWords[f[0]]:
			continue
		case actionWords[f[0]]:
			return steps[i]
		}
		return ""
	}
	return ""
}

// lastAsk is the goal's last step when it reads something off the page
// and other steps come before it: what the answer is to be about.
func lastAsk(goal string) string {
	steps := plan(goal).Steps
	if len(steps) < 2 {
		return ""
	}
	if f := terms(steps[len(steps)-1]); len(f) > 0 && askWords[f[0]] {
		return steps[len(steps)-1]
	}
	return ""
}

// did reports whether the action t could be the step: a step only a click
// does needs a click, and the element acted on (or the text typed) shares
// a word with the step, besides the goal's targets, which a search box and
// a result share alike. A step with no such words needs the kind of
// action its verb names (a link to open "the first one", a dropdown to
// sort by) or an element named by the verb ("Load more"), and a history
// that does not say what was acted on gets the benefit of the doubt.
func did(step string, t calltypes.Taken, targets []string) bool {
	if t.Element == "" && t.Outcome == "" {
		return true
	}
	if strings.HasPrefix(t.Outcome, "failed") {
		return false
	}
	f := terms(step)
	if len(f) == 0 {
		return true
	}
	verb := stem(f[0])
	if clickWords[verb] && t.Action.Kind != calltypes.ActClick {
		return false
	}
	skip := map[string]bool{verb: true}
	for _, tg := range targets {
		for _, w := range keywords(tg) {
			skip[w] = true
		}
	}
	var rest []string
	for _, w := range keywords(step) {
		if !skip[w] && !genericWords[w] {
			rest = append(rest, w)
		}
	}
	acted := map[string]bool{}
	for _, w := range keywords(t.Element + " " + t.Action.Text) {
		acted[w] = true
	}
	if len(rest) == 0 {
		// Nothing names the element: the verb says what kind it is.
		switch k := t.Action.Kind; {
		case linkWords[verb]: // "open the first one": a result, a link
			return hasPrefixFold(t.Element, "link")
		case clickWords[verb], sendWords[verb]:
			return k == calltypes.ActClick
		case chooseWords[verb] && k == calltypes.ActSelect, typeWords[verb] && k == calltypes.ActType:
			return true
		}
		return acted[verb]
	}
	for _, w := range append(rest, verb) {
		if acted[w] {
			return true
		}
	}
	return false
}
