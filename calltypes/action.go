package calltypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Action is the next thing to do: one of the registered actions (click
// an element, type text into it, press a key, ... or declare the goal
// done; see Actions). It is click-pick's answer, and what the agent
// runs, records and shows in later prompts, always written by String.
type Action struct {
	Kind string `json:"action"`
	// Index is the element acted on (click, type, select, scroll to);
	// -1 when the action has none.
	Index int `json:"index"`
	// Text is what to type, the option to select, the URL to navigate to,
	// the scroll direction (up, down), the key to press, the file to
	// upload (<file:NAME>): what the action's spec says it is.
	Text string `json:"text"`
	// Submit presses Enter after typing, as a person ends a search.
	Submit bool   `json:"submit"`
	Reason string `json:"reason"`
}

// String is the action's one written form, without its reason; its
// action's spec (ActionSpec.Write) writes it, and ParseAction reads it
// back. The built-ins':
//
//	click [3]
//	type [2] "walnut desk" and submit
//	select [4] "Price: low to high"
//	scroll down
//	scroll to [7]
//	navigate "https://shop.example/cart"
//	press "Escape"
//	hover [5]
//	back
//	wait
//	upload [4] <file:resume>
//	done
//
// An action of no registered kind is written so that it parses as none.
func (a Action) String() string {
	spec, ok := LookupAction(a.Kind)
	switch {
	case !ok:
		return strconv.Quote(a.Kind) + " [" + strconv.Itoa(a.Index) + "] " + strconv.Quote(a.Text)
	case spec.Write != nil:
		return spec.Write(a)
	}
	return writeDefault(spec, a)
}

// ParseAction reads an action written by String. The reason is not part
// of the written form, so it comes back empty.
func ParseAction(s string) (Action, error) {
	a, rest, err := scanAction(s)
	if err != nil {
		return Action{}, err
	}
	if rest != "" {
		return Action{}, fmt.Errorf("calltypes: %q goes on after its action: %q", s, rest)
	}
	return a, nil
}

// scanAction reads an action from the start of s and returns what follows.
func scanAction(s string) (Action, string, error) {
	verb, rest, _ := strings.Cut(s, " ")
	spec, ok := LookupAction(verb)
	var a Action
	var err error
	switch {
	case !ok:
		err = fmt.Errorf("%q is not an action", verb)
	case spec.Scan != nil:
		a, rest, err = spec.Scan(rest)
	default:
		a, rest, err = scanDefault(spec, rest)
	}
	if err != nil {
		return Action{}, "", fmt.Errorf("calltypes: reading the action %q: %v", s, err)
	}
	a.Kind = verb
	return a, rest, nil
}

func scanIndex(s string) (int, string, error) {
	if !strings.HasPrefix(s, "[") {
		return 0, "", errors.New("want an [index]")
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, "", errors.New("the [index] is not closed")
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || n < 0 {
		return 0, "", fmt.Errorf("%q is not an index", s[1:end])
	}
	return n, s[end+1:], nil
}

func scanQuoted(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", errors.New("want a quoted text")
	}
	text, _ := strconv.Unquote(q)
	return text, s[len(q):], nil
}

// Taken is a step already taken, as prompts show it: the action, what its
// element was, and what came of it. It is written as one line, short
// enough that a history of them costs little:
//
//	type [2] "walnut desk" and submit on searchbox "Search" → navigated to /search?q=walnut+desk
type Taken struct {
	Action Action
	// Element describes what the index pointed at when the step was
	// taken; indexes of old pages mean nothing on the current one.
	Element string
	// Outcome is what happened: the page navigated, changed, nothing, or
	// the error.
	Outcome string
}

const (
	takenOn    = " on "
	takenArrow = " → "
)

// String is the step's one written form.
func (t Taken) String() string {
	s := t.Action.String()
	if t.Element != "" {
		s += takenOn + shown(t.Element)
	}
	if t.Outcome != "" {
		s += takenArrow + shown(t.Outcome)
	}
	return s
}

// ParseTaken reads a step written by String.
func ParseTaken(s string) (Taken, error) {
	a, rest, err := scanAction(s)
	if err != nil {
		return Taken{}, err
	}
	t := Taken{Action: a}
	if strings.HasPrefix(rest, takenOn) {
		t.Element, rest = cutUnquoted(rest[len(takenOn):], takenArrow)
		if rest != "" {
			rest = takenArrow + rest
		}
	}
	switch {
	case strings.HasPrefix(rest, takenArrow):
		t.Outcome = rest[len(takenArrow):]
	case rest != "":
		return Taken{}, fmt.Errorf("calltypes: %q: want %q or %q after the action, not %q", s, strings.TrimSpace(takenOn), strings.TrimSpace(takenArrow), rest)
	}
	return t, nil
}

// MarshalJSON writes the step as its one line.
func (t Taken) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// UnmarshalJSON reads the step from its line.
func (t *Taken) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("calltypes: a step taken is a string: %w", err)
	}
	v, err := ParseTaken(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// cutUnquoted splits s at the first sep outside double quotes, so an
// element's quoted name may hold the separator.
func cutUnquoted(s, sep string) (before, after string) {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && in:
			i++
		case s[i] == '"':
			in = !in
		case !in && strings.HasPrefix(s[i:], sep):
			return s[:i], s[i+len(sep):]
		}
	}
	return s, ""
}
