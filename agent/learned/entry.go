package learned

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/headroom-agent/headroom/calltypes"
)

// Format is the version of the entry's shape; an entry of another format
// is a miss, never a guess.
const Format = 1

// Entry is one learned run of a task template: for each goal the agent
// pursued with the model, the steps it took, each with how to find its
// element again and what it did. It is data in the product's own action
// form: it holds parameters and secrets by name only, never a value.
type Entry struct {
	Format   int      `json:"format"`
	Key      string   `json:"key"`
	Task     string   `json:"task"`
	Template Template `json:"template"`
	// Revision is the store's, set when the entry is loaded: a verified
	// run that heals the entry writes the next one.
	Revision  int64     `json:"-"`
	LearnedAt time.Time `json:"learned_at"`
	Goals     []Goal    `json:"goals"`
	// SummaryReserved is what the closing summary reserved when learned:
	// saved when a replay needs none.
	SummaryReserved int64 `json:"summary_reserved,omitempty"`
	// Answer is where the summary read its answer, when all of it was
	// read from lines of the page: a replay reads them and asks no model.
	Answer *Answer `json:"answer,omitempty"`
}

// Template is what the entry was learned for, as a person reads it: the
// key is a hash of more (the steps, the check, the prompts).
type Template struct {
	Goal    string   `json:"goal"`
	Start   string   `json:"start"` // the start URL's host and path
	Params  []string `json:"params,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// Goal is one goal the model pursued: its place among the task's steps,
// the goal as written (with parameters by name), and its learned steps.
type Goal struct {
	Step int    `json:"step"` // the task step, from 0; the goal itself is 0 of none
	Goal string `json:"goal"`
	// PlanReserved is what the goal's plan reserved when learned.
	PlanReserved int64  `json:"plan_reserved,omitempty"`
	Steps        []Step `json:"steps"`
}

// Step is one action the model chose, in its written form with the index
// it had when learned (calltypes.Action.String): a replay finds the
// element again by Target and rewrites the index.
type Step struct {
	Action  string  `json:"action"`
	Target  *Target `json:"target,omitempty"` // nil for an action on no element
	Outcome Outcome `json:"outcome"`
	// Reserved is what the step's calls reserved when learned: what a
	// replay of it saves.
	Reserved int64 `json:"reserved"`
}

// Target is how to find an element again: its role and name, the words
// of the list item it stands in and the words just before it, and its
// place among the like elements (same role and name) on the page.
type Target struct {
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	// Item is the words of its list item, or of the words before it when
	// it stands in no list; {{name}} where a parameter's value stood.
	Item string `json:"item,omitempty"`
	// Near is the line just before it, when that says something.
	Near string `json:"near,omitempty"`
	// Nth is its place among Of like elements, from 1.
	Nth int `json:"nth"`
	Of  int `json:"of"`
}

// Effects an outcome can have, as the browser reports them.
const (
	Navigated = "navigated"
	Changed   = "changed"
	Nothing   = "nothing"
)

// Outcome is what the step did, of a kind a replay can check: the page
// navigated to a path of this shape, changed (the element now reads
// this), or nothing happened.
type Outcome struct {
	Effect string `json:"effect"`
	Path   string `json:"path,omitempty"`  // after navigating: the path, {{name}} where a value stood
	Reads  string `json:"reads,omitempty"` // what the element read after, when it changed
}

// maxEntry bounds what Decode reads: no learned run is this long.
const maxEntry = 1 << 20

// Encode writes the entry as JSON, checked first.
func Encode(e *Entry) ([]byte, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("learned: %w", err)
	}
	return b.Bytes(), nil
}

// Decode reads an entry Encode wrote: a field it does not know, a format
// it does not read or a rule the entry breaks is an error naming it.
func Decode(data []byte) (*Entry, error) {
	if len(data) > maxEntry {
		return nil, fmt.Errorf("learned: entry of %d bytes, over the bound of %d", len(data), maxEntry)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("learned: entry: %w", err)
	}
	if dec.More() {
		return nil, errors.New("learned: entry: more after the entry")
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	return &e, nil
}

// Check reports the first rule the entry breaks: its format, a key the
// store takes, goals with steps, each step an action in written form.
func (e *Entry) Check() error {
	if e.Format != Format {
		return fmt.Errorf("learned: entry format %d, want %d", e.Format, Format)
	}
	if err := CheckKey(e.Key); err != nil {
		return err
	}
	if len(e.Goals) == 0 {
		return fmt.Errorf("learned: entry %s has no goals", e.Key)
	}
	for gi, g := range e.Goals {
		if g.Step < 0 {
			return fmt.Errorf("learned: entry %s: goal %d: step %d", e.Key, gi+1, g.Step)
		}
		for si, s := range g.Steps {
			if err := s.check(); err != nil {
				return fmt.Errorf("learned: entry %s: goal %d step %d: %w", e.Key, gi+1, si+1, err)
			}
		}
	}
	if e.Answer != nil {
		if err := e.Answer.check(); err != nil {
			return fmt.Errorf("learned: entry %s: %w", e.Key, err)
		}
	}
	return nil
}

func (s Step) check() error {
	a, err := calltypes.ParseAction(s.Action)
	if err != nil {
		return err
	}
	// Any registered action but done replays: ParseAction knows only
	// those, so an entry naming an action this binary lacks is refused.
	if a.Kind == calltypes.ActDone {
		return fmt.Errorf("action %q is not one a replay takes", s.Action)
	}
	if (a.Index >= 0) != (s.Target != nil) {
		return fmt.Errorf("action %q and its target disagree", s.Action)
	}
	switch s.Outcome.Effect {
	case Navigated, Changed, Nothing:
	default:
		return fmt.Errorf("outcome %q: want navigated, changed or nothing", s.Outcome.Effect)
	}
	for _, w := range []string{s.Action, s.Outcome.Path, s.Outcome.Reads} {
		if hasControl(w) {
			return fmt.Errorf("a control character in %q", w)
		}
	}
	if t := s.Target; t != nil {
		for _, w := range []string{t.Role, t.Name, t.Item, t.Near} {
			if hasControl(w) {
				return fmt.Errorf("a control character in the target's %q", w)
			}
		}
		if t.Role == "" || t.Nth < 1 || t.Of < t.Nth {
			return fmt.Errorf("target %s: want a role and 1 <= nth <= of", t)
		}
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// Steps counts the entry's learned steps.
func (e *Entry) Steps() int {
	n := 0
	for _, g := range e.Goals {
		n += len(g.Steps)
	}
	return n
}

// Reserved is what the learned run's calls reserved: a whole replay's
// saving.
func (e *Entry) Reserved() int64 {
	n := e.SummaryReserved
	for _, g := range e.Goals {
		n += g.PlanReserved
		for _, s := range g.Steps {
			n += s.Reserved
		}
	}
	return n
}

// Goal is the learned goal of the task step i, nil when none was learned.
func (e *Entry) Goal(i int) *Goal {
	for k := range e.Goals {
		if e.Goals[k].Step == i {
			return &e.Goals[k]
		}
	}
	return nil
}
