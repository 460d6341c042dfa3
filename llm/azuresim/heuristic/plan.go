package heuristic

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/calltypes"
)

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
	f := terms(cutText(s, 40))
	return len(f) > 0 && actionWords[f[0]]
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
		case len(f) > 1 && f[0] == "show" && (f[1] == "only" || f[1] == "just"):
			return steps[i] // "show only walnut": a filter to set, not a thing to read
		case askWords[f[0]]:
			continue
		case actionWords[f[0]]:
			return steps[i]
		}
		return ""
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
	if ownWords[verb] && t.Action.Kind == calltypes.ActClick && !acted[verb] {
		return false
	}
	if len(rest) == 0 {
		// Nothing names the element: the verb says what kind it is.
		switch k := t.Action.Kind; {
		case linkWords[verb]: // "open the first one": a result, a link
			return hasPrefixFold(t.Element, "link")
		case clickWords[verb]:
			return k == calltypes.ActClick
		case sendWords[verb]: // "save": a button, not a box ticked on the way
			return k == calltypes.ActClick && (acted[verb] || hasPrefixFold(t.Element, "button"))
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
