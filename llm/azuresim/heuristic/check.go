package heuristic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// check answers a yes/no question; see Model.
func check(in calltypes.CheckInput) calltypes.Verdict {
	// Asked about the goal right after an action: a goal that ends in
	// doing something is not met before that was done, whatever the page
	// already shows (the product's name, the button still to press).
	if in.LastAction != nil && slices.Contains(terms(in.Question), "goal") {
		step := lastDeed(in.Goal)
		if step != "" && !did(step, *in.LastAction, readGoal(in.Goal).targets()) {
			return calltypes.Verdict{Answer: false, Reason: fmt.Sprintf("%q is still to do", cutText(step, 40))}
		}
		// Typed and not sent: a form is not done until it is. (A choice
		// in a drop-down often is the deed: a sort, a filter.)
		if a := in.LastAction.Action; step != "" && a.Kind == calltypes.ActType && !a.Submit {
			return calltypes.Verdict{Answer: false, Reason: "the form is still to be sent"}
		}
		// It was done, and the page changed where it was: the change is
		// the evidence, unless it says no.
		if line, ok := changedNear(in.Page, in.LastAction.Action.Index); ok && step != "" {
			if w, refused := refusal(line, in.Goal); refused {
				return calltypes.Verdict{Answer: false, Reason: fmt.Sprintf("the page says %q", cutText(w, 60))}
			}
			return calltypes.Verdict{Answer: true, Reason: fmt.Sprintf("%q done: the page now shows %q", cutText(step, 40), cutText(line, 60))}
		}
	}
	parts := []string{in.Page.Title, in.Page.Words()}
	for _, e := range in.Page.Elements() {
		parts = append(parts, e.Name, e.Placeholder, e.Value)
	}
	hay := evidence(parts...)

	// Values the question quotes decide alone, and must all be there.
	// Otherwise enough of the goal's and the last action's must be, and
	// the question's own key words are counted too.
	own := quotes(in.Question)
	src := own
	if len(own) == 0 {
		src = shownQuotes(readGoal(in.Goal))
		// What was typed or chosen shows on the page; a key pressed, a
		// URL, a file's name or a tab's number need not.
		if a := in.LastAction; a != nil && a.Action.Text != "" && (a.Action.Kind == calltypes.ActType || a.Action.Kind == calltypes.ActSelect) {
			src = append(src, quoted{text: a.Action.Text})
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
		if qualifierWords[w] {
			continue
		}
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

// changedNear is the words of the line marked new that stands nearest the
// element at index (the element's own line first); false when the page
// marks none new.
func changedNear(p calltypes.Page, index int) (string, bool) {
	at := slices.IndexFunc(p.Lines, func(l calltypes.Line) bool { return l.Element != nil && l.Element.Index == index })
	best, dist := -1, 0
	for i, l := range p.Lines {
		if !l.Changed {
			continue
		}
		d := i - at
		if d < 0 {
			d = -d
		}
		if at < 0 {
			d = i
		}
		if best < 0 || d < dist {
			best, dist = i, d
		}
	}
	if best < 0 {
		return "", false
	}
	if l := p.Lines[best]; l.Element != nil {
		return l.Element.Words(), true
	}
	return p.Lines[best].Text, true
}

// refusalWords say an action did not take.
var refusalWords = wordSet(`error failed failure invalid required must denied incorrect wrong unable cannot problem`)

// refusal reports a changed line that says the action failed, in a word
// the goal does not use itself (a goal that asks what a form says is
// required expects "required").
func refusal(line, goal string) (string, bool) {
	own := readGoal(goal).words
	for _, w := range terms(line) {
		if refusalWords[w] && !own[stem(w)] {
			return line, true
		}
	}
	return "", false
}
