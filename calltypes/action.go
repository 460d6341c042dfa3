package calltypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Action kinds.
const (
	ActClick    = "click"
	ActType     = "type"
	ActSelect   = "select"
	ActScroll   = "scroll"
	ActNavigate = "navigate"
	ActDone     = "done"
)

// Action is the next thing to do: click an element, type text into it,
// select an option of it, scroll (up, down, or to it), navigate to a URL,
// or declare the goal done. It is click-pick's answer, and what the agent
// runs, records and shows in later prompts, always written by String.
type Action struct {
	Kind string `json:"action"`
	// Index is the element acted on (click, type, select, scroll to);
	// -1 when the action has none.
	Index int `json:"index"`
	// Text is what to type, the option to select, the URL to navigate to,
	// or the scroll direction (up, down).
	Text string `json:"text"`
	// Submit presses Enter after typing, as a person ends a search.
	Submit bool   `json:"submit"`
	Reason string `json:"reason"`
}

// String is the action's one written form, without its reason:
//
//	click [3]
//	type [2] "walnut desk" and submit
//	select [4] "Price: low to high"
//	scroll down
//	scroll to [7]
//	navigate "https://shop.example/cart"
//	done
//
// ParseAction reads it back.
func (a Action) String() string {
	idx := "[" + strconv.Itoa(a.Index) + "]"
	switch a.Kind {
	case ActClick:
		return "click " + idx
	case ActType:
		s := "type " + idx + " " + strconv.Quote(a.Text)
		if a.Submit {
			s += " and submit"
		}
		return s
	case ActSelect:
		return "select " + idx + " " + strconv.Quote(a.Text)
	case ActScroll:
		if a.Text == "" {
			return "scroll to " + idx
		}
		return "scroll " + a.Text
	case ActNavigate:
		return "navigate " + strconv.Quote(a.Text)
	case ActDone:
		return "done"
	}
	return strconv.Quote(a.Kind) + " " + idx + " " + strconv.Quote(a.Text)
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
	a := Action{Kind: verb, Index: -1}
	var err error
	switch verb {
	case ActClick:
		a.Index, rest, err = scanIndex(rest)
	case ActType, ActSelect:
		if a.Index, rest, err = scanIndex(rest); err == nil {
			a.Text, rest, err = scanQuoted(strings.TrimPrefix(rest, " "))
		}
		if err == nil && verb == ActType && strings.HasPrefix(rest, " and submit") {
			a.Submit, rest = true, strings.TrimPrefix(rest, " and submit")
		}
	case ActScroll:
		switch {
		case strings.HasPrefix(rest, "to "):
			a.Index, rest, err = scanIndex(rest[3:])
		case strings.HasPrefix(rest, "up"), strings.HasPrefix(rest, "down"):
			a.Text, rest, _ = strings.Cut(rest, " ")
			if rest != "" {
				rest = " " + rest
			}
		default:
			err = errors.New(`scroll is followed by up, down or "to [index]"`)
		}
	case ActNavigate:
		a.Text, rest, err = scanQuoted(rest)
	case ActDone:
		if rest != "" {
			rest = " " + rest
		}
	default:
		err = fmt.Errorf("%q is not an action", verb)
	}
	if err != nil {
		return Action{}, "", fmt.Errorf("calltypes: reading the action %q: %v", s, err)
	}
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
