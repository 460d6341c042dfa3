package learned

import (
	"fmt"
	"strings"
)

// String is the step as a person reads it: the action on its element,
// and what it did.
//
//	click the button "Pay" (1 of 4) in the item "{{invoice}} · Acme GmbH", then navigated to /paid
func (s Step) String() string {
	verb, _, _ := strings.Cut(s.Action, " ")
	var b strings.Builder
	b.WriteString(verb)
	if s.Target != nil {
		b.WriteString(" " + s.Target.String())
	}
	if _, arg, ok := strings.Cut(s.Action, "] "); ok && verb != "click" {
		b.WriteString(" " + arg)
	} else if s.Target == nil {
		_, rest, _ := strings.Cut(s.Action, " ")
		b.WriteString(" " + rest)
	}
	b.WriteString(", then " + s.Outcome.String())
	return b.String()
}

// String names the element as a person finds it.
func (t Target) String() string {
	s := "the " + t.Role
	if t.Name != "" {
		s += fmt.Sprintf(" %q", t.Name)
	}
	if t.Of > 1 {
		s += fmt.Sprintf(" (%d of %d)", t.Nth, t.Of)
	}
	if t.Item != "" {
		s += fmt.Sprintf(" in the item %q", t.Item)
	} else if t.Near != "" {
		s += fmt.Sprintf(" after %q", t.Near)
	}
	return s
}

// String is the outcome in words.
func (o Outcome) String() string {
	switch {
	case o.Effect == Navigated && o.Path != "":
		return "navigated to " + o.Path
	case o.Effect == Changed && o.Reads != "":
		return fmt.Sprintf("changed: it read %q", o.Reads)
	case o.Effect == Nothing:
		return "nothing changed"
	}
	return o.Effect
}
