package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/redact"
)

// Learned is what a run did with learned runs: the entry it followed,
// the steps it replayed and asked the model for, the tokens replaying
// saved, why it stopped replaying, and what it stored.
type Learned struct {
	Key string `json:"key"`
	// Revision is the entry's the run followed; 0 when there was none.
	Revision int64 `json:"revision,omitempty"`
	Replayed int   `json:"replayed"` // steps taken from the learned run, with no call
	Asked    int   `json:"asked"`    // steps the model chose
	// TokensSaved is what the replayed steps' calls reserved when learned
	// (and the plan and summary a whole replay did not make).
	TokensSaved int64 `json:"tokens_saved"`
	// Miss is why the learned run was not followed to the end (a
	// learned.Miss* reason), MissDetail what it met; empty on a hit.
	Miss       string `json:"miss,omitempty"`
	MissDetail string `json:"miss_detail,omitempty"`
	// Stored is what the run wrote: "learned" (the first entry),
	// "healed" (a new revision), "kept" (another run's entry won the
	// race); empty when it wrote nothing. StoredRevision is its revision.
	Stored         string `json:"stored,omitempty"`
	StoredRevision int64  `json:"stored_revision,omitempty"`
	// WaitedMS is the time spent waiting for another agent learning the
	// same template.
	WaitedMS int64 `json:"waited_ms,omitempty"`
	// AnswerRead is set when the answer was read from the lines the
	// learned run's summary read, with no call.
	AnswerRead bool `json:"answer_read,omitempty"`
}

// Stored outcomes.
const (
	StoredLearned = "learned"
	StoredHealed  = "healed"
	StoredKept    = "kept"
)

// Waiting for another agent learning the same template: at most this
// long, and never more than half of what is left of the task's deadline.
const (
	learnWait     = 3 * time.Minute
	learnPoll     = 200 * time.Millisecond
	learnLeaseTTL = 3 * time.Minute
)

// learning is a run's part in learned runs: the entry it follows, and
// the steps it learns as it goes.
type learning struct {
	lib    *learned.Library
	holder string
	ps     params
	tmpl   *Task

	entry  *learned.Entry // followed; nil when none
	rev    int64          // the stored revision a save replaces
	leased bool
	off    bool   // the store failed: run with the model, store nothing
	unsafe string // why this run's steps may not be kept, if so

	goals    []learned.Goal
	replayOK bool            // every learned step so far replayed as learned
	summary  bool            // the run's last call is its summary
	answer   *learned.Answer // where the summary read its answer, if it all was
	res      Learned
}

// startLearning finds the learned run of the task's template, when the
// run uses a store and the task has a check to verify a replay with:
// read it, or, when nobody has learned it, take the lease to learn it,
// or wait a bounded while for the agent that holds it.
func (r *runner) startLearning(ctx context.Context) {
	lib := r.o.Learned
	if lib == nil || r.t.Learn == LearnOff || r.t.Success == nil {
		return
	}
	tmpl := r.t.Template()
	l := &learning{lib: lib, holder: r.o.Session, ps: params(r.t.Bound()), tmpl: tmpl, replayOK: true}
	l.res.Key = TemplateKey(r.t, r.o.Caller.Types)
	r.learn, r.res.Learned = l, &l.res
	e, err := lib.Load(ctx, l.res.Key)
	if errors.Is(err, learned.ErrNotFound) {
		if e, err = r.leadOrWait(ctx); e == nil && (err == nil || errors.Is(err, learned.ErrNotFound)) {
			l.miss(learned.MissNone, "nothing learned for this task yet")
		}
	}
	var m *learned.MissError
	switch {
	case err == nil && e != nil:
		l.follow(e, r.t)
	case errors.As(err, &m):
		l.rev = m.Revision
		l.miss(m.Reason, m.Err.Error())
		r.progress("learned: %s %s: %v; the model runs it", l.res.Key, m.Reason, m.Err)
	case err != nil && !errors.Is(err, learned.ErrNotFound):
		l.off = true
		r.progress("learned: %v; the model runs it, and nothing is stored", err)
	}
}

// leadOrWait takes the lease to learn the template, or waits for the
// agent that holds it: a fleet that starts together asks the model once.
func (r *runner) leadOrWait(ctx context.Context) (*learned.Entry, error) {
	l := r.learn
	ttl := learnLeaseTTL
	if r.t.Deadline > 0 {
		ttl = time.Duration(r.t.Deadline)
	}
	e, ok, err := l.lib.Lead(ctx, l.res.Key, l.holder, ttl)
	if err != nil || ok || e != nil {
		l.leased = ok
		return e, err
	}
	wait := learnWait
	if !r.deadline.IsZero() {
		wait = min(wait, time.Until(r.deadline)/2)
	}
	r.progress("learned: another agent is learning %s; waiting up to %s", l.res.Key, wait.Round(time.Second))
	began := time.Now()
	e, err = l.lib.Wait(ctx, l.res.Key, l.holder, wait, learnPoll, ttl)
	l.res.WaitedMS = time.Since(began).Milliseconds()
	if errors.Is(err, learned.ErrNotFound) {
		l.leased = true // Wait claimed it, or nobody holds it: learn
	}
	return e, err
}

// follow takes e as the run's learned run, when the task can follow it:
// every parameter and secret it names is the task's.
func (l *learning) follow(e *learned.Entry, t *Task) {
	l.rev = e.Revision
	for _, g := range e.Goals {
		for _, s := range g.Steps {
			if why := usable(s, l.ps, t); why != "" {
				l.miss(learned.MissUnusable, why)
				return
			}
		}
	}
	l.entry, l.res.Revision, l.res.Miss, l.res.MissDetail = e, e.Revision, "", ""
}

// usable says why a learned step names what the task lacks, "" when it
// does not.
func usable(s learned.Step, ps params, t *Task) string {
	for _, w := range []string{s.Action, s.Outcome.Path, s.Outcome.Reads} {
		if _, ok := ps.bind(w); !ok {
			return "a step names a parameter the task does not declare: " + s.Action
		}
	}
	if s.Target != nil {
		for _, w := range []string{s.Target.Name, s.Target.Item, s.Target.Near} {
			if _, ok := ps.bind(w); !ok {
				return "a step's element names a parameter the task does not declare"
			}
		}
	}
	for _, name := range browser.PlaceholderNames(s.Action) {
		if _, ok := t.Secrets[name]; !ok {
			return "a step types the secret " + name + ", which the task does not name"
		}
	}
	return ""
}

// miss notes and counts why the run does not follow a learned run (any
// further).
func (l *learning) miss(reason, detail string) {
	l.res.Miss, l.res.MissDetail = reason, clip(detail, 200)
	l.replayOK = false
	l.lib.Miss(reason)
}

// beginGoal starts learning the task step i, a goal for the model.
func (l *learning) beginGoal(i int) {
	goal := l.tmpl.Goal
	if i < len(l.tmpl.Steps) {
		goal = l.tmpl.Steps[i].Agent
	}
	l.goals = append(l.goals, learned.Goal{Step: i, Goal: goal, Steps: []learned.Step{}})
}

func (l *learning) goal() *learned.Goal {
	if l == nil || len(l.goals) == 0 {
		return nil
	}
	return &l.goals[len(l.goals)-1]
}

// capture learns a step taken on before, which left the page as after:
// the action with parameter values and secrets written as their names,
// how to find its element again, and what it did.
func (l *learning) capture(before, after *browser.Snapshot, a calltypes.Action, out browser.Outcome, reserved int64) {
	g := l.goal()
	if g == nil {
		return
	}
	if out.Secret && shown(a.Text, true) == redact.Marker {
		l.unsafe = "a value typed into a password field that is no task secret"
		return
	}
	a.Text = l.ps.writeBack(a.Text)
	s := learned.Step{Action: a.String(), Reserved: reserved, Outcome: learned.Outcome{Effect: string(out.Effect)}}
	if a.Index >= 0 && a.Kind != calltypes.ActNavigate {
		s.Target = targetOf(before, a.Index, l.ps)
	}
	switch out.Effect {
	case browser.Navigated:
		s.Outcome.Path = l.ps.writeBack(pathOf(out.URL))
	case browser.Changed:
		if i := sameElement(before, after, a.Index); i >= 0 && after.Elements[i].Name != before.Elements[a.Index].Name {
			s.Outcome.Reads = l.ps.writeBack(clip(after.Elements[i].Name, 80))
		}
	}
	g.Steps = append(g.Steps, s)
}

// keep stores what a verified run learned: a new entry, or the next
// revision of the one it followed when the model finished it. A run the
// model judged, or one that replayed whole, writes nothing.
func (r *runner) keep(ctx context.Context) {
	l := r.learn
	if l == nil || l.off {
		return
	}
	for _, s := range r.res.Steps {
		if !s.Scripted && !s.Replayed {
			l.res.Asked++
		}
	}
	verified := r.res.Status == Succeeded && r.res.SuccessBy == SuccessChecked
	switch {
	case !verified:
		return
	case l.entry != nil && l.replayOK && l.res.Asked == 0:
		l.lib.Hit()
		return
	case l.unsafe != "":
		r.progress("learned: not stored: %s", l.unsafe)
		return
	}
	e := l.entryOf(r)
	if e == nil {
		return
	}
	err := l.lib.Save(ctx, e, l.rev)
	switch {
	case err == nil && l.rev > 0:
		l.res.Stored, l.res.StoredRevision = StoredHealed, e.Revision
	case err == nil:
		l.res.Stored, l.res.StoredRevision = StoredLearned, e.Revision
	case errors.Is(err, learned.ErrConflict):
		l.res.Stored = StoredKept // another verified run stored first: it wins
	default:
		r.progress("learned: not stored: %v", err)
		return
	}
	r.progress("learned: %s %s (revision %d, %d steps)", l.res.Key, l.res.Stored, e.Revision, e.Steps())
}

// entryOf is the entry this run learned; nil when it holds what no
// entry may: a secret's value.
func (l *learning) entryOf(r *runner) *learned.Entry {
	e := &learned.Entry{
		Format: learned.Format, Key: l.res.Key, Task: l.tmpl.Name, LearnedAt: time.Now().UTC().Truncate(time.Second),
		Template: learned.Template{Goal: l.tmpl.Goal, Start: startOf(l.tmpl.StartURL), Params: slices.Sorted(maps.Keys(l.tmpl.Params)), Secrets: slices.Sorted(maps.Keys(l.tmpl.Secrets))},
		Goals:    l.goals,
	}
	if len(r.res.Calls) > 0 && l.summary {
		e.SummaryReserved = r.res.Calls[len(r.res.Calls)-1].TokensReserved
		e.Answer = l.answer
	} else if l.entry != nil {
		e.SummaryReserved, e.Answer = l.entry.SummaryReserved, l.entry.Answer
	}
	data, err := json.Marshal(e)
	if err != nil || redact.Text(string(data)) != string(data) {
		r.progress("learned: not stored: the steps hold a secret's value")
		return nil
	}
	return e
}

// release gives back the lease to learn, if the run held it.
func (r *runner) release() {
	if l := r.learn; l != nil && l.leased {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.lib.Release(ctx, l.res.Key, l.holder); err != nil {
			r.progress("learned: releasing the lease: %v", err)
		}
	}
}

// replayedWhole reports a run that took every step from what was learned.
func (l *learning) replayedWhole() bool {
	return l != nil && l.entry != nil && l.replayOK
}

// TemplateKey is the key a task's learned run is stored under: its name,
// and a hash of what makes two runs the same job: the goal and steps with
// parameters as names, the start URL's host and path, the success check,
// the names of its parameters and secrets, and the system prompts of the
// types that choose steps and write the answer. A change to any of them is
// a new template.
func TemplateKey(t *Task, types *calltypes.Registry) string {
	tm := t.Template()
	if types == nil {
		types = calltypes.Default()
	}
	var prompts []string
	for _, name := range []string{calltypes.Planning, calltypes.ClickPick, calltypes.YesNo, calltypes.Summarize} {
		ty, _ := types.Lookup(name)
		prompts = append(prompts, ty.System)
	}
	h := sha256.New()
	json.NewEncoder(h).Encode(struct {
		Goal, Start     string
		Steps           []TaskStep
		Success         *Success
		Params, Secrets []string
		Prompts         []string
	}{tm.Goal, startOf(tm.StartURL), tm.Steps, tm.Success, slices.Sorted(maps.Keys(tm.Params)), slices.Sorted(maps.Keys(tm.Secrets)), prompts})
	return keyName(tm.Name) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

var notKey = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// keyName is a task's name as a key's start: its letters, digits, dots
// and dashes.
func keyName(name string) string {
	k := strings.Trim(notKey.ReplaceAllString(name, "-"), ".-")
	if len(k) > 60 {
		k = k[:60]
	}
	if k == "" {
		k = "task"
	}
	return k
}

// startOf is a start URL's host and path: where the template begins.
func startOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Host + u.Path
}

// pathOf is a URL's path, the shape a navigation is checked by.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// summaryOptional reports a task whose goal asks for nothing back: after
// a verified replay its summary has nothing to say the check did not.
// A goal that asks (a question, or a verb of reading or reporting) keeps
// its summary, as does a task with an answer type.
func summaryOptional(t *Task) bool {
	if t.AnswerType != "" || strings.Contains(t.Goal, "?") {
		return false
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(t.Goal), func(r rune) bool { return !isWordRune(r) }) {
		if slices.Contains(askWords, w) {
			return false
		}
	}
	return true
}

var askWords = []string{"report", "tell", "what", "which", "how", "who", "when", "where", "list", "read", "summarize", "summarise", "describe", "extract", "count", "answer", "say", "find", "return"}
