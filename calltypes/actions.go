package calltypes

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Need says whether an action takes an element, or a text.
type Need int

// Needs. The zero Need is Never, so an ActionSpec names only what it takes.
const (
	Never    Need = iota // the action takes none
	Optional             // it may take one
	Required             // it cannot go without
)

// ActionSpec is one action a model may pick, as click-pick tells the model
// of it and as its written form reads: the spec says what it takes, the
// shared rules check a pick against it, and the default written form is
// its name, its [index] and its quoted text, each when it has one. The
// agent pairs each spec with what it does on the page (agent.RegisterAction).
type ActionSpec struct {
	// Name is the action's verb: a lower-case word (letters, digits, '-').
	Name string
	// Describe follows the name in click-pick's list of actions, in a
	// few words that tell a model when to use it: for click, "an element
	// (a link, button, checkbox, a field to focus)".
	Describe string
	// Where, when set, says the action is told of where it applies, not
	// in click-pick's list, which every call pays for: upload beside the
	// task's files, tab and close-tab in the note of open tabs. It names
	// that place, for people (headroom actions); the name stays in the
	// answer schema's enum.
	Where string
	// Element and Text say whether the action takes an element (index)
	// and a text.
	Element, Text Need
	// TextIs says what the text is, in the answer schema's description of
	// text: "what to type".
	TextIs string
	// Submit lets the action take submit (type does: Enter after typing).
	Submit bool
	// Check, when set, refuses what the shared rules let through, in words
	// a model can act on.
	Check func(Action) error
	// Mend, when set, fixes a slip of the model's in place and says what
	// it fixed, as Type.Mend does; what it cannot fix without guessing it
	// leaves for Check.
	Mend func(a *Action) []string
	// Write and Scan give the action a written form of its own; nil uses
	// the default one. Scan reads what follows the verb (without its
	// space) and returns what follows the action.
	Write func(Action) string
	Scan  func(rest string) (Action, string, error)
}

var actionNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// maxDescribe bounds a description: every click-pick call carries it.
const maxDescribe = 200

func (s ActionSpec) check() error {
	if !actionNameRE.MatchString(s.Name) {
		return fmt.Errorf("calltypes: action name %q: want a lower-case word of letters, digits and '-' (at most 32)", s.Name)
	}
	if strings.TrimSpace(s.Describe) == "" || strings.ContainsAny(s.Describe, "\n\r;") || utf8.RuneCountInString(s.Describe) > maxDescribe {
		return fmt.Errorf("calltypes: action %s: Describe must be one phrase of 1 to %d characters, no ';' or line break (it is a clause of click-pick's prompt)", s.Name, maxDescribe)
	}
	if s.Text != Never && strings.TrimSpace(s.TextIs) == "" {
		return fmt.Errorf("calltypes: action %s takes a text: say what it is in TextIs", s.Name)
	}
	if (s.Write == nil) != (s.Scan == nil) {
		return fmt.Errorf("calltypes: action %s: Write and Scan go together (one written form, read back)", s.Name)
	}
	return nil
}

// actionSet is the registered actions, done last. Actions are registered
// as database/sql registers drivers: in init, before any registry is made
// (Default builds click-pick's prompt and schema from the actions
// registered then).
var actionSet struct {
	mu    sync.RWMutex
	specs []ActionSpec
}

func init() {
	for _, s := range builtinActions() {
		if err := RegisterAction(s); err != nil {
			panic(err) // the built-ins are this package's; a test covers them
		}
	}
}

// RegisterAction adds an action a model may pick. It refuses a taken
// name or a spec that cannot be told to a model. Register in init: a
// registry made earlier does not tell its click-pick of the action.
func RegisterAction(s ActionSpec) error {
	if err := s.check(); err != nil {
		return err
	}
	actionSet.mu.Lock()
	defer actionSet.mu.Unlock()
	if slices.ContainsFunc(actionSet.specs, func(o ActionSpec) bool { return o.Name == s.Name }) {
		return fmt.Errorf("calltypes: action %q is registered already", s.Name)
	}
	// done stays last: a model reads the list as what to do, then how to end.
	at := len(actionSet.specs)
	if at > 0 && actionSet.specs[at-1].Name == ActDone {
		at--
	}
	actionSet.specs = slices.Insert(actionSet.specs, at, s)
	return nil
}

// Actions returns the registered actions, in the order click-pick lists
// them.
func Actions() []ActionSpec {
	actionSet.mu.RLock()
	defer actionSet.mu.RUnlock()
	return slices.Clone(actionSet.specs)
}

// LookupAction returns the action registered as name.
func LookupAction(name string) (ActionSpec, bool) {
	actionSet.mu.RLock()
	defer actionSet.mu.RUnlock()
	i := slices.IndexFunc(actionSet.specs, func(s ActionSpec) bool { return s.Name == name })
	if i < 0 {
		return ActionSpec{}, false
	}
	return actionSet.specs[i], true
}

func actionNames() []string {
	var names []string
	for _, s := range Actions() {
		names = append(names, s.Name)
	}
	return names
}

// actionsPrompt is click-pick's list of the actions, but those told of
// where they apply: "Actions: click an element (...); type text ...;
// done when ...".
func actionsPrompt(specs []ActionSpec) string {
	var parts []string
	for _, s := range specs {
		if s.Where == "" {
			parts = append(parts, s.Name+" "+s.Describe)
		}
	}
	return "Actions: " + strings.Join(parts, "; ") + "."
}

// textMeans is the answer schema's description of text: what each
// action's text is.
func textMeans(specs []ActionSpec) string {
	var parts []string
	for _, s := range specs {
		if s.Text != Never && s.Where == "" {
			parts = append(parts, s.TextIs)
		}
	}
	switch len(parts) {
	case 0:
		return "empty"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", or " + parts[len(parts)-1]
}

// writeDefault is the default written form: the name, then [index] and
// the quoted text when the action has them and takes them.
func writeDefault(spec ActionSpec, a Action) string {
	s := a.Kind
	if a.Index >= 0 && spec.Element != Never {
		s += " [" + strconv.Itoa(a.Index) + "]"
	}
	if a.Text != "" && spec.Text != Never {
		s += " " + strconv.Quote(a.Text)
	}
	return s
}

// scanDefault reads the default written form after the verb.
func scanDefault(spec ActionSpec, rest string) (Action, string, error) {
	a := Action{Kind: spec.Name, Index: -1}
	s := rest
	if s != "" {
		s = " " + s // each part is read with the space before it
	}
	var err error
	if spec.Element != Never && strings.HasPrefix(s, " [") {
		if a.Index, s, err = scanIndex(s[1:]); err != nil {
			return Action{}, "", err
		}
	}
	if spec.Text != Never && strings.HasPrefix(s, ` "`) {
		if a.Text, s, err = scanQuoted(s[1:]); err != nil {
			return Action{}, "", err
		}
	}
	if spec.Element == Required && a.Index < 0 {
		return Action{}, "", errors.New("want an [index]")
	}
	if spec.Text == Required && a.Text == "" {
		return Action{}, "", errors.New("want a quoted text")
	}
	if s != "" && s[0] != ' ' {
		return Action{}, "", fmt.Errorf("%q after the action", s)
	}
	return a, s, nil
}

// validate checks a pick against its action's spec: the shared rules
// first, then the spec's own Check.
func (s ActionSpec) validate(a Action) error {
	if a.Index < -1 {
		return fmt.Errorf("index %d is not an element: use an index from the page's elements, or -1 for none", a.Index)
	}
	switch {
	case s.Element == Required && a.Index < 0:
		return fmt.Errorf("%s needs the index of an element from the page's elements", a.Kind)
	case s.Element == Never && a.Index >= 0:
		return fmt.Errorf("%s acts on no element: set index -1", a.Kind)
	case s.Text == Required && strings.TrimSpace(a.Text) == "":
		return fmt.Errorf("%s needs text: %s", a.Kind, s.TextIs)
	case a.Submit && !s.Submit:
		return fmt.Errorf("submit belongs to type; set it false for %s", a.Kind)
	}
	if s.Check != nil {
		return s.Check(a)
	}
	return nil
}

// mend clears what the action gives no meaning (submit where it takes
// none, an index where it takes no element), then asks the spec's own
// Mend. A text where it takes none is let be: the written form drops it.
func (s ActionSpec) mend(a *Action) []string {
	var mends []string
	if a.Submit && !s.Submit {
		a.Submit = false
		mends = append(mends, "submit dropped from "+a.Kind)
	}
	if a.Index >= 0 && s.Element == Never {
		mends = append(mends, fmt.Sprintf("index %d dropped from %s", a.Index, a.Kind))
		a.Index = -1
	}
	if s.Mend != nil {
		mends = append(mends, s.Mend(a)...)
	}
	return mends
}
