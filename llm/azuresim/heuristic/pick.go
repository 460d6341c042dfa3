package heuristic

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// Elements, read off the page's view.

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// elements are the page's elements in document order, a field with no
// name named as a person reads it: a text box by the words just before
// it, a checkbox by those just after it.
func elements(p calltypes.Page) []calltypes.Element {
	var out []calltypes.Element
	words := func(i int) string {
		if i < 0 || i >= len(p.Lines) || p.Lines[i].Element != nil || p.Lines[i].Note || p.Lines[i].Heading > 0 {
			return ""
		}
		if t := p.Lines[i].Text; len(strings.Fields(t)) <= maxLabelWords {
			return t
		}
		return ""
	}
	for i, l := range p.Lines {
		if l.Element == nil {
			continue
		}
		e := *l.Element
		if e.Name == "" {
			switch {
			case isCheck(e):
				e.Name = cmp.Or(words(i+1), words(i-1))
			case isTextInput(e) || isSelect(e):
				e.Name = words(i - 1)
			}
		}
		out = append(out, e)
	}
	return out
}

// maxLabelWords is the most words a label has.
const maxLabelWords = 8

// isCheck reports a checkbox, a radio button or a switch: clicked to set.
func isCheck(e calltypes.Element) bool {
	switch lower(e.Role) {
	case "checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio":
		return true
	}
	return false
}

// isPassword reports a password field, whose value the page never shows.
func isPassword(e calltypes.Element) bool { return lower(e.Type) == "password" }

// isSelect reports a drop-down: a list of options to choose one of.
func isSelect(e calltypes.Element) bool {
	return len(e.Options) > 0 || lower(e.Role) == "listbox"
}

// textTypes are the input types a person types into.
var textTypes = wordSet(`text search email tel url password number date time month week datetime-local`)

// isTextInput reports a field to type into: a text box of any type.
func isTextInput(e calltypes.Element) bool {
	if isSelect(e) {
		return false
	}
	switch lower(e.Role) {
	case "textbox", "searchbox", "combobox", "spinbutton":
		return e.Type == "" || textTypes[lower(e.Type)]
	}
	return false
}

// usable elements can be acted on: enabled, with an index to name them by.
func usable(e calltypes.Element) bool { return !e.Disabled && e.Index >= 0 }

func isLink(e calltypes.Element) bool { return lower(e.Role) == "link" }

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

func isButton(e calltypes.Element) bool { return lower(e.Role) == "button" }

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
	case isCheck(e):
		kind = lower(e.Role)
	}
	for _, s := range []string{e.Name, e.Placeholder, e.Value, e.Href} {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			return fmt.Sprintf("%s %q", kind, cutText(s, 40))
		}
	}
	return fmt.Sprintf("%s #%d", kind, e.Index)
}

// fill is what a text box or dropdown should hold for the goal, or that
// a checkbox should be checked.
type fill struct {
	text    string
	ok      bool
	settled bool // it holds it already
	check   bool // a checkbox to check: a click
}

// assign decides which quoted value (or search text) goes into which text
// box or dropdown: one already holding it keeps it (a password field
// holds what typed, the last text typed into each field by index, says);
// then the field whose name shares a word
// with the value's label; then the first free text box, search boxes
// first. A dropdown the goal quotes nothing for takes the word after its
// name in the goal ("topic Billing"), or the option the goal names
// ("ship it Express"). The checkboxes the goal names are to be checked.
func assign(els []calltypes.Element, g goalInfo, goal string, typed map[int]string) []fill {
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
	// A password field shows dots, not what it holds: it holds what was
	// typed into it; typed by someone else, or written down as a mark
	// that hides it, the value the goal labels as a password, or else the
	// last one left when something was typed into it here.
	for p, e := range els {
		if !fillable(p) || !isPassword(e) || e.Value == "" {
			continue
		}
		text, here := typed[e.Index]
		at := slices.IndexFunc(values, func(v value) bool { return v.text == text })
		if at < 0 || used[at] {
			at = -1
			for i, v := range values {
				if !used[i] && slices.ContainsFunc(v.label, func(w string) bool { return secretLabels[w] }) {
					at = i
				}
			}
		}
		if at < 0 && here {
			for i := range values {
				if !used[i] {
					at = i
				}
			}
		}
		if at >= 0 {
			fills[p], used[at] = fill{text: values[at].text, ok: true, settled: true}, true
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
		case t == "" || t == "text":
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
			opt := optionLike(optionAfter(goal, names[p]), els[p].Options)
			if opt == "" {
				opt = optionNamed(goal, els[p].Options)
			}
			if opt != "" {
				fills[p] = fill{text: opt, ok: true, settled: phrase(els[p].Value) == phrase(opt)}
			}
		}
	}
	for p, e := range els {
		if usable(e) && isCheck(e) && namedBy(e.Name, g) {
			fills[p] = fill{ok: true, check: true, settled: e.Checked}
		}
	}
	return fills
}

// optionLike is the option a word of the goal stands for: the one it
// names, or starts; "" when it names none. With no options known, the
// word itself.
func optionLike(word string, options []string) string {
	if word == "" || len(options) == 0 {
		return word
	}
	w := phrase(word)
	for _, o := range options {
		if p := phrase(o); p == w || strings.HasPrefix(p, w+" ") {
			return o
		}
	}
	return ""
}

// optionNamed is the longest of a dropdown's options that the goal names,
// "" when it names none.
func optionNamed(goal string, options []string) string {
	hay := newHaystack(goal)
	best := ""
	for _, o := range options {
		if len(content(keywords(o))) > 0 && hay.has(o) && len(o) > len(best) {
			best = o
		}
	}
	return best
}

// namedBy reports a checkbox the goal names: every word of its name that
// means something (one at least) is a word of the goal ("Walnut" in "show
// only walnut furniture", "I accept the terms" in "accept the terms").
func namedBy(name string, g goalInfo) bool {
	kw := keywords(name)
	var meaning []string
	for _, w := range kw {
		if !genericWords[w] {
			meaning = append(meaning, w)
		}
	}
	if len(meaning) == 0 {
		return false
	}
	for _, w := range meaning {
		if !g.words[w] {
			return false
		}
	}
	return true
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
		if !slices.Contains(names, stem(strings.ToLower(trim(w)))) || strings.ContainsAny(w[len(w)-1:], ",;:.!?") {
			continue // the clause ends at the name: no option after it
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

// backWords name a button that undoes or leaves a form rather than
// sends it.
var backWords = wordSet(`cancel reset clear back delete remove discard close`)

// submitButton is the position of the button that sends the form the
// goal fills: the first after its last field that does not undo it; -1
// when the goal fills no field.
func submitButton(els []calltypes.Element, fills []fill) int {
	last := -1
	for p, f := range fills {
		if f.ok {
			last = p
		}
	}
	if last < 0 {
		return -1
	}
	for p := last + 1; p < len(els); p++ {
		e := els[p]
		if usable(e) && isButton(e) && !slices.ContainsFunc(terms(e.Name), func(w string) bool { return backWords[w] }) {
			return p
		}
	}
	return -1
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
func pick(in calltypes.PickInput, offered []string) calltypes.Action {
	g := readGoal(in.Goal)
	step := ""
	if in.Step >= 0 && in.Step < len(in.Plan) {
		step = in.Plan[in.Step]
	}
	stepWords := map[string]bool{}
	for _, w := range keywords(step) {
		stepWords[w] = true
	}
	// A step says first what to do ("Download the invoice", "Send the
	// form"): of two elements that match alike, the one that names the
	// doing is the one to take.
	verb := ""
	if ws := keywords(step); len(ws) > 0 && strings.HasPrefix(strings.ToLower(strings.TrimSpace(step)), ws[0]) {
		verb = ws[0]
	}
	acted := false
	for _, h := range in.History {
		switch h.Action.Kind {
		case calltypes.ActClick, calltypes.ActType, calltypes.ActSelect, calltypes.ActUpload:
			acted = true
		default:
			acted = acted || !slices.Contains(stockActions, h.Action.Kind)
		}
	}
	last := calltypes.Taken{Action: calltypes.Action{Index: -1}}
	if len(in.History) > 0 {
		last = in.History[len(in.History)-1]
	}
	els := elements(in.Page)
	typed := map[int]string{}
	for _, h := range in.History {
		if h.Action.Kind == calltypes.ActType && !strings.HasPrefix(h.Outcome, "failed") {
			typed[h.Action.Index] = h.Action.Text
		}
	}
	fills := assign(els, g, in.Goal, typed)
	unnamed := unnamedItems(in.Page, in.Goal, step)
	pending, settled, unchecked := false, false, false
	for _, f := range fills {
		pending = pending || (f.ok && !f.settled)
		settled = settled || f.settled
		unchecked = unchecked || (f.check && !f.settled)
	}
	// A checkbox the goal names, unchecked on this page: not done yet.
	if why, ok := finished(in.Page, g, in.Goal, acted, last); ok && !unchecked {
		return calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: why}
	}
	if a, ok := sendSearch(els, last); ok {
		return a
	}
	if a, ok := ownAction(offered, g, els, in.History); ok {
		return a
	}
	if a, ok := uploadFile(els, in.Files, g, in.History); ok {
		return a
	}
	if a, ok := tryKeys(in.History); ok {
		return a
	}
	targets := g.targets()
	send := submitButton(els, fills)
	type cand struct {
		pos   int
		score float64
	}
	var cands []cand
	fillScore := 0.0
	named := false // a field the goal names is still to fill
	for p, e := range els {
		if !usable(e) || fills[p].settled || unnamed[e.Index] || isFileInput(e) {
			continue // nothing to do with it, another item's, or an upload's
		}
		s := 0.0
		for _, w := range elementWords(e) {
			if g.words[w] {
				s++
			}
			if stepWords[w] {
				s++
			}
			if w == verb {
				s += 0.25
			}
		}
		switch {
		case fills[p].ok:
			s++ // fill the fields before pressing anything
			fillScore = max(fillScore, s)
			named = named || fills[p].check || slices.ContainsFunc(fieldWords(e), func(w string) bool { return g.words[w] })
		case isButton(e) && settled && !pending:
			s += 0.5 // the form is filled: send it
			if p == send {
				s += 0.25 // with its own button
			}
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
		case f.check:
			return calltypes.Action{Kind: calltypes.ActClick, Index: e.Index, Reason: "check the " + describe(e)}
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

// evidence is the page as what a goal looks for on it: its words, and
// "price" and "cost" where it states an amount of money, which a page
// seldom calls so.
func evidence(texts ...string) haystack {
	h := newHaystack(texts...)
	for _, t := range texts {
		if money.MatchString(t) {
			h.words["price"], h.words["cost"] = true, true
		}
	}
	return h
}

// qualifierWords pick among what a page shows ("the cheapest"); no page
// says them of itself.
var qualifierWords = wordSet(`cheapest lowest least smallest minimum dearest priciest highest largest maximum expensive best worst newest oldest latest`)

// shownWords are what the page says in its own words: its text and its
// elements' names, not what its fields hold, which may be what was typed.
func shownWords(p calltypes.Page) string {
	var b strings.Builder
	for _, l := range p.Lines {
		switch {
		case l.Note:
		case l.Element != nil:
			b.WriteString(l.Element.Name + "\n")
		default:
			b.WriteString(l.Text + "\n")
		}
	}
	return b.String()
}

// secretLabels name a value no page shows again once typed.
var secretLabels = wordSet(`password passcode passphrase pin secret card cvc cvv`)

// shownQuotes are the goal's quoted values a page can show: not those
// labelled as passwords or card numbers, which pages mask once taken.
func shownQuotes(g goalInfo) []quoted {
	var out []quoted
	for _, q := range g.quotes {
		if !slices.ContainsFunc(q.label, func(w string) bool { return secretLabels[w] }) {
			out = append(out, q)
		}
	}
	return out
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
	case !acted, k == calltypes.ActType && !last.Action.Submit, k == calltypes.ActSelect, k == calltypes.ActUpload:
		return "", false
	}
	if step := lastDeed(goal); step != "" && !did(step, last, g.targets()) {
		return "", false
	}
	hay := evidence(pg.Title, shownWords(pg))
	why := ""
	if quoted := shownQuotes(g); len(quoted) > 0 {
		var shown []string
		for _, q := range quoted {
			if hay.has(q.text) {
				shown = append(shown, q.text)
			}
		}
		if len(shown) > 0 && enough(len(shown), len(quoted)) {
			why = fmt.Sprintf("the page shows %q", cutText(shown[0], 40))
		}
	}
	if why == "" && len(g.quotes) == 0 && len(g.content) == 0 && lastDeed(goal) != "" {
		// Nothing to look for on a page ("click into the search box"):
		// the step done is all there is to see.
		why = "the goal's last step is done"
	}
	if why == "" && len(g.quotes) > 0 && len(shownQuotes(g)) == 0 && lastDeed(goal) != "" &&
		last.Action.Kind == calltypes.ActClick && !strings.HasPrefix(last.Outcome, string(calltypes.ActDone)) && last.Outcome != "nothing" {
		// Every value the goal gives is one pages mask once taken (a
		// password, a card number): the deed done, with an effect, is
		// the evidence there is.
		why = "the goal's last step is done; the page does not show back what was typed"
	}
	if why == "" && len(g.content) > 0 {
		all := true
		for _, w := range g.content {
			all = all && (hay.words[w] || qualifierWords[w])
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
	for _, e := range pg.Elements() {
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
