package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/plain"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// Options are what Run needs besides the task: the page to act on and
// the caller to think with, both opened (and closed) by whoever runs it.
type Options struct {
	Page   *browser.Page // required
	Caller *llm.Caller   // required
	// Session keys the calls' affinity (a deployment's warm prompt
	// cache); default the task's name and a random suffix.
	Session string
	// Progress gets one line per step, for a container's log.
	Progress io.Writer
	// OutDir, when set, gets a screenshot after every step.
	OutDir string
	// CallTimeout bounds one call, waiting for budget included, so no
	// call can hang a task without a deadline; 2 minutes when 0.
	CallTimeout time.Duration
}

// Bounds of the transcript a prompt carries, so its size stays flat
// however long the task runs.
const (
	recentSteps = 3  // the last steps, in full
	olderNotes  = 2  // older steps kept as short notes, besides one that counts the rest
	noteRunes   = 80 // a note's length
	stallSteps  = 3  // steps without effect in a row before planning again
)

// GoalQuestion is what the yes-no check asks after an action, and when
// the model says it is done.
const GoalQuestion = "Is the goal met, by what the page shows?"

// Run takes the task on the page: the scripted steps as written, and for
// each sub-goal (the goal itself when there are none) a plan, then steps
// of observe, pick, act and, where the outcome is ambiguous, a yes-no
// check, until the model is done, the task's bounds stop it, or it is
// stuck; then a summary answers the goal. The result is whole even when
// Run stops early; the error is set only when the run failed (status
// error), and says why: the browser, the model, or the context.
func Run(ctx context.Context, t *Task, o Options) (Result, error) {
	if o.Page == nil || o.Caller == nil {
		return Result{Task: t.Name, Status: Errored, Reason: "no page or no caller"}, errors.New("agent: Run needs Options.Page and Options.Caller")
	}
	r := newRunner(t, o)
	start := time.Now()
	err := r.run(ctx)
	r.res.Totals.ElapsedMS = time.Since(start).Milliseconds()
	r.total()
	r.res.Refused, r.res.ClosedTabs = o.Page.Blocked(), o.Page.ClosedTabs()
	r.res.AllowedDomains, _ = o.Page.Allowed()
	r.res.AllowedExtra = t.extraDomains(o.Page)
	// What a page showed, a server answered or a model wrote may hold a
	// secret the run learned along the way: the result is written with
	// none (redact.Text on every string), wherever it goes next.
	return redact.Copy(r.res), redact.Error(err)
}

// runner is one run's state.
type runner struct {
	t    *Task
	o    Options
	res  Result
	page *browser.Page

	taken []calltypes.Taken // every model step, oldest first
	// seen counts picks by page fingerprint and action: a pick seen
	// before is a loop, answered by planning again; the same pick right
	// after that plan is stuck.
	seen     map[string]int
	deadline time.Time // the task's, zero when none
}

func newRunner(t *Task, o Options) *runner {
	if o.Session == "" {
		// One agent's calls keep to one deployment; two agents on the same
		// task are two sessions.
		o.Session = fmt.Sprintf("%s-%08x", t.Name, rand.Uint32())
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Minute
	}
	return &runner{t: t, o: o, page: o.Page, seen: map[string]int{},
		res: Result{Task: t.Name, Status: Errored, Steps: []Step{}, Calls: []llm.Report{}}}
}

// stop ends a run with a status; err is the cause when the status is
// error.
type stop struct {
	status Status
	reason string
	err    error
}

func (s *stop) Error() string { return string(s.status) + ": " + s.reason }

func (r *runner) run(ctx context.Context) error {
	if r.t.Deadline > 0 {
		var cancel context.CancelFunc
		r.deadline = time.Now().Add(time.Duration(r.t.Deadline))
		ctx, cancel = context.WithDeadline(ctx, r.deadline)
		defer cancel()
	}
	err := r.walk(ctx)
	var st *stop
	switch {
	case err == nil:
		return nil
	case errors.As(err, &st):
	default:
		st = r.classify(ctx, err)
	}
	r.res.Status, r.res.Reason = st.status, st.reason
	return st.err
}

// walk takes the task's steps, then answers the goal.
func (r *runner) walk(ctx context.Context) error {
	if _, err := r.page.Navigate(ctx, r.t.StartURL); err != nil {
		return err
	}
	steps := r.t.Steps
	if len(steps) == 0 {
		steps = []TaskStep{{Agent: r.t.Goal}}
	}
	met := true
	for i, s := range steps {
		if s.Agent == "" {
			if err := r.scripted(ctx, i, s.Step); err != nil {
				return err
			}
			continue
		}
		ok, err := r.pursue(ctx, s.Agent)
		if err != nil {
			return err
		}
		met = met && ok
	}
	return r.finish(ctx, met)
}

// scripted takes one scripted step; a step that fails fails the task.
func (r *runner) scripted(ctx context.Context, i int, s browser.Step) error {
	began := time.Now()
	a := s.Action(r.o.OutDir)
	out, err := r.page.Do(ctx, a)
	if out.Secret {
		a.Text = redact.Marker
	}
	step := Step{Action: a.String(), Outcome: r.outcome(out, err), URL: out.URL, Scripted: true}
	r.record(ctx, &step, began)
	if err != nil {
		if fatal(err) || ctx.Err() != nil {
			return err
		}
		return &stop{Failed, fmt.Sprintf("scripted step %d (%s) failed: %v", i+1, a, err), nil}
	}
	return nil
}

// pursue works toward one sub-goal with the model, and reports whether it
// was met.
func (r *runner) pursue(ctx context.Context, goal string) (bool, error) {
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return false, err
	}
	plan, err := r.plan(ctx, goal, snap, nil)
	if err != nil {
		return false, err
	}
	pos, idle := 0, 0
	replanned := "" // the repeat that made the last plan, if one did
	for {
		if r.modelSteps() >= r.maxSteps() {
			return false, &stop{Failed, fmt.Sprintf("max_steps (%d) reached before the goal was met", r.maxSteps()), nil}
		}
		if met, err := r.successHolds(ctx); err != nil || met {
			return met, err
		}
		began := time.Now()
		step := Step{}
		in := calltypes.PickInput{Goal: goal, Plan: plan, Step: pos, Page: r.view(calltypes.ClickPick, snap, nil, -1), Notes: r.notes(), History: r.recent()}
		pick, rep, err := call(ctx, r, calltypes.PickCall, in)
		step.Calls = append(step.Calls, rep)
		if err != nil {
			step.Action, step.Outcome = "(no pick)", "failed: "+err.Error()
			r.record(ctx, &step, began)
			return false, err
		}
		step.Action, step.Why = pick.String(), pick.Reason
		if pick.Kind == calltypes.ActDone {
			// Done means met or hopeless; the page says which.
			v, rep, err := r.check(ctx, goal, nil, snap, nil)
			step.Calls = append(step.Calls, rep)
			if err == nil {
				step.Verdict = verdict(v)
			}
			step.Outcome = "done"
			r.record(ctx, &step, began)
			if err != nil {
				return false, err
			}
			if !v.Answer {
				return false, &stop{Failed, "the model gave up: " + pick.Reason, nil}
			}
			return true, nil
		}
		elem := describe(snap, pick)
		key := snap.Fingerprint + "|" + pick.String()
		if r.seen[key]++; r.seen[key] > 1 {
			if replanned == key {
				step.Target, step.Outcome = elem, "not taken: the same action on the same page again, after planning again"
				r.record(ctx, &step, began)
				return false, &stop{Stuck, fmt.Sprintf("%s on %s again after planning again: it was taken there before", pick, snap.URL), nil}
			}
			// A loop: say so in the history, so the next pick knows, and
			// plan again from here.
			step.Target, step.Outcome = elem, "not taken: it was taken on this very page before; planning again"
			r.taken = append(r.taken, calltypes.Taken{Action: pick, Element: elem, Outcome: "not taken: already taken on this very page"})
			r.record(ctx, &step, began)
			if plan, err = r.plan(ctx, goal, snap, r.recent()); err != nil {
				return false, err
			}
			pos, idle, replanned = 0, 0, key
			continue
		}
		replanned = ""
		act, err := BrowserAction(snap, pick)
		var out browser.Outcome
		if err == nil {
			out, err = r.page.Do(ctx, act)
		}
		if out.Secret {
			pick.Text = redact.Marker
			step.Action = pick.String()
		}
		step.Target, step.Outcome, step.URL = elem, r.outcome(out, err), out.URL
		taken := calltypes.Taken{Action: pick, Element: elem, Outcome: clip(step.Outcome, noteRunes)}
		r.taken = append(r.taken, taken)
		if err != nil && (fatal(err) || ctx.Err() != nil) {
			r.record(ctx, &step, began)
			return false, err
		}
		// Whatever happened, the next pick needs the page as it is now;
		// an index that is gone just means looking again.
		before := snap
		if snap, err = r.page.Observe(ctx); err != nil {
			r.record(ctx, &step, began)
			return false, err
		}
		if now := changeOf(before, snap, pick.Index); now != "" && !strings.HasPrefix(step.Outcome, "failed") {
			// What the element now says is the action's effect, for the
			// next pick and the answer: "Add to cart" now reads "Added".
			step.Outcome += "; " + now
			taken.Outcome = clip(step.Outcome, noteRunes)
			r.taken[len(r.taken)-1] = taken
		}
		if out.Effect == browser.Navigated || out.Effect == browser.Changed {
			idle = 0
			pos = min(pos+1, max(0, len(plan)-1))
			// The page changed: is that the goal? Only the page can say.
			v, rep, err := r.check(ctx, goal, &taken, snap, before)
			step.Calls = append(step.Calls, rep)
			if err != nil {
				r.record(ctx, &step, began)
				return false, err
			}
			step.Verdict = verdict(v)
			r.record(ctx, &step, began)
			if v.Answer {
				return true, nil
			}
			continue
		}
		r.record(ctx, &step, began)
		if idle++; idle >= stallSteps {
			if plan, err = r.plan(ctx, goal, snap, r.recent()); err != nil {
				return false, err
			}
			pos, idle = 0, 0
		}
	}
}

// plan asks for a plan (again, with what was tried, when history is set).
func (r *runner) plan(ctx context.Context, goal string, snap *browser.Snapshot, history []calltypes.Taken) ([]string, error) {
	p, rep, err := call(ctx, r, calltypes.PlanCall, calltypes.PlanInput{Goal: goal, Page: r.view(calltypes.Planning, snap, nil, -1), History: history})
	r.res.Calls = append(r.res.Calls, rep)
	if err != nil {
		return nil, err
	}
	r.res.Plan = p.Steps
	r.progress("plan  %s  (%s)", strings.Join(p.Steps, " / "), callLine(rep))
	return p.Steps, nil
}

// check asks whether the page shows the goal met: after the last action,
// which was taken on before; nil for both when there was none.
func (r *runner) check(ctx context.Context, goal string, last *calltypes.Taken, snap, before *browser.Snapshot) (calltypes.Verdict, llm.Report, error) {
	acted := -1
	if last != nil {
		acted = last.Action.Index
	}
	in := calltypes.CheckInput{Question: GoalQuestion, Goal: goal, LastAction: last, Page: r.view(calltypes.YesNo, snap, before, acted)}
	return call(ctx, r, calltypes.CheckCall, in)
}

// finish answers the goal from the page the task ended on, and settles
// the status.
func (r *runner) finish(ctx context.Context, met bool) error {
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return err
	}
	answer := calltypes.Summarize
	if r.t.AnswerType != "" {
		answer = r.t.AnswerType
	}
	in := calltypes.SummaryInput{Goal: r.t.Goal, Notes: r.notes(), History: r.recent(), Page: r.view(answer, snap, nil, -1)}
	if r.t.AnswerType != "" {
		// The task's own type answers instead of the summary: structured
		// data, checked against its schema, with no Go written for it.
		out, rep, err := callNamed(ctx, r, r.t.AnswerType, in)
		r.res.Calls = append(r.res.Calls, rep)
		if err != nil {
			return err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		r.res.Data, r.res.Answer = out, string(b)
	} else {
		s, rep, err := call(ctx, r, calltypes.SummaryCall, in)
		r.res.Calls = append(r.res.Calls, rep)
		if err != nil {
			return err
		}
		r.res.Answer = s.Answer
	}
	r.progress("answer  %s  (%s)", clip(r.res.Answer, 120), callLine(r.res.Calls[len(r.res.Calls)-1]))
	if r.t.Success != nil {
		ok, err := r.successHolds(ctx)
		switch {
		case err != nil:
			return err
		case !ok:
			return &stop{Failed, "the final page does not pass the success check (" + r.t.Success.String() + ")", nil}
		}
		r.res.Status, r.res.Reason = Succeeded, "the final page passes the success check ("+r.t.Success.String()+")"
		return nil
	}
	if !met {
		return &stop{Failed, "the goal was not met", nil}
	}
	r.res.Status, r.res.Reason = Succeeded, "the model found the goal met on the page"
	return nil
}

// successHolds reports whether the task's success check holds on the
// page now; false when the task has none.
func (r *runner) successHolds(ctx context.Context) (bool, error) {
	s := r.t.Success
	if s == nil {
		return false, nil
	}
	if s.URL != "" {
		u, err := r.page.URL(ctx)
		if err != nil {
			return false, err
		}
		re, err := regexp.Compile(s.URL)
		if err != nil || !re.MatchString(u) {
			return false, err
		}
	}
	if s.Text != "" {
		text, err := r.page.ExtractPage(ctx)
		if err != nil || !strings.Contains(text, s.Text) {
			return false, err
		}
	}
	return true, nil
}

// String is the check as a person would say it.
func (s Success) String() string {
	var parts []string
	if s.Text != "" {
		parts = append(parts, fmt.Sprintf("shows %q", s.Text))
	}
	if s.URL != "" {
		parts = append(parts, fmt.Sprintf("URL matches %q", s.URL))
	}
	return strings.Join(parts, " and ")
}

// call makes one typed model call of the task, through llm.Call: the
// task's class, its session, what is left of its token budget, and a
// bound on the wait.
func call[In, Out any](ctx context.Context, r *runner, t calltypes.Typed[In, Out], in In) (Out, llm.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	out, rep, err := llm.Call(ctx, r.o.Caller, t, in, r.callOptions())
	r.res.Totals.TokensReserved += rep.TokensReserved // the budget's running count, at once
	return out, rep, err
}

// callNamed is call for a type known by name, such as a task's
// answer_type defined in the config.
func callNamed(ctx context.Context, r *runner, name string, in any) (any, llm.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	out, rep, err := r.o.Caller.Call(ctx, name, in, r.callOptions())
	r.res.Totals.TokensReserved += rep.TokensReserved
	return out, rep, err
}

// callOptions place the task's calls: one session, the task's class,
// and what is left of its token budget.
func (r *runner) callOptions() llm.CallOptions {
	o := llm.CallOptions{Session: r.o.Session, Priority: r.t.Priority}
	if r.t.TokenBudget > 0 {
		o.Allowance = max(1, r.t.TokenBudget-r.res.Totals.TokensReserved)
	}
	return o
}

// view is the page a call of the named type reads, in the type's view
// and within its cap; see ViewOf.
func (r *runner) view(typeName string, now, before *browser.Snapshot, acted int) calltypes.Page {
	t, ok := r.o.Caller.Types.Lookup(typeName)
	if !ok {
		// The call will fail on the unknown type; its page is the words.
		t = calltypes.Type{View: calltypes.ViewWords, PageTokens: calltypes.DefaultPageTokens}
	}
	return ViewOf(t, now, before, acted)
}

// recent is the last steps, in full.
func (r *runner) recent() []calltypes.Taken {
	return r.taken[max(0, len(r.taken)-recentSteps):]
}

// notes fold the steps before the recent ones into a few short lines: one
// that counts them, and the last few, shortened.
func (r *runner) notes() []string {
	older := r.taken[:max(0, len(r.taken)-recentSteps)]
	if len(older) == 0 {
		return nil
	}
	var nav, changed, none int
	for _, t := range older {
		switch {
		case strings.HasPrefix(t.Outcome, string(browser.Navigated)):
			nav++
		case strings.HasPrefix(t.Outcome, string(browser.Changed)):
			changed++
		default:
			none++
		}
	}
	notes := []string{fmt.Sprintf("%d earlier steps: %d went to another page, %d changed this one, %d did nothing or failed", len(older), nav, changed, none)}
	for _, t := range older[max(0, len(older)-olderNotes):] {
		notes = append(notes, clip(t.Action.Kind+" "+t.Element+" → "+t.Outcome, noteRunes))
	}
	return notes
}

// record numbers a step, screenshots it, times it, and logs it.
func (r *runner) record(ctx context.Context, s *Step, began time.Time) {
	s.N = len(r.res.Steps) + 1
	if s.URL == "" {
		s.URL, _ = r.page.URL(ctx)
	}
	if s.Calls == nil {
		s.Calls = []llm.Report{}
	}
	if r.o.OutDir != "" && ctx.Err() == nil {
		if png, err := r.page.Screenshot(ctx); err == nil {
			name := fmt.Sprintf("step-%03d.png", s.N)
			// Never through a link planted in the folder: a new file, or a
			// regular one replaced whole.
			if err := safefile.WriteBytes(filepath.Join(r.o.OutDir, name), png, 0o644); err != nil {
				r.progress("step %d: no screenshot: %v", s.N, err)
			} else {
				s.Screenshot = name
			}
		}
	}
	s.ElapsedMS = time.Since(began).Milliseconds()
	var model int64
	for _, c := range s.Calls {
		model += c.LatencyMS
	}
	s.AgentMS = max(0, s.ElapsedMS-model)
	r.res.Steps = append(r.res.Steps, *s)
	var reserved, used int64
	deployment := ""
	for _, c := range s.Calls {
		reserved += c.TokensReserved
		used += c.TokensUsed
		deployment = c.Deployment
	}
	line := fmt.Sprintf("step %d  %s", s.N, s.Action)
	if s.Target != "" {
		line += " on " + clip(s.Target, 50)
	}
	line += "  → " + clip(s.Outcome, 80)
	if s.Verdict != "" {
		line += "  [" + clip(s.Verdict, 60) + "]"
	}
	if len(s.Calls) > 0 {
		line += fmt.Sprintf("  tokens %d reserved, %d used  %s", reserved, used, deployment)
	}
	r.progress("%s", line)
}

// progress writes a line for a person watching: what a page wrote in it
// is shown with its control characters escaped, and without secrets.
func (r *runner) progress(format string, args ...any) {
	if r.o.Progress != nil {
		line := fmt.Sprintf(format, args...)
		fmt.Fprintf(r.o.Progress, "headroom run: %s\n", plain.Escape(redact.Text(line)))
	}
}

func (r *runner) modelSteps() int {
	n := 0
	for _, s := range r.res.Steps {
		if !s.Scripted {
			n++
		}
	}
	return n
}

func (r *runner) maxSteps() int {
	if r.t.MaxSteps > 0 {
		return r.t.MaxSteps
	}
	return DefaultMaxSteps
}

// total adds up the run; the token budget's running count is replaced by
// the sum of the calls, which is the same thing.
func (r *runner) total() {
	all := slices.Clone(r.res.Calls)
	for _, s := range r.res.Steps {
		all = append(all, s.Calls...)
	}
	c := callsTotal(all)
	r.res.Totals = Totals{
		Steps: len(r.res.Steps), Calls: len(all), ElapsedMS: r.res.Totals.ElapsedMS, TokenBudget: r.t.TokenBudget,
		PromptTokens: c.PromptTokens, TokensReserved: c.TokensReserved, TokensUsed: c.TokensUsed,
		ModelMS: c.LatencyMS, Retries: c.Retries, RateLimited: c.RateLimited,
	}
}

// classify turns what stopped a run into its status.
func (r *runner) classify(ctx context.Context, err error) *stop {
	switch {
	case errors.Is(err, llm.ErrOverBudget):
		return &stop{BudgetExhausted, err.Error(), nil}
	case !r.deadline.IsZero() && !time.Now().Before(r.deadline),
		// The router sheds a call it cannot place before the deadline it
		// was given: when that was the task's, the deadline is what hit.
		errors.Is(err, budget.ErrShed) && !r.deadline.IsZero() && time.Until(r.deadline) < r.o.CallTimeout:
		return &stop{DeadlineHit, fmt.Sprintf("the task's deadline (%s) passed", time.Duration(r.t.Deadline)), nil}
	case ctx.Err() != nil:
		return &stop{Errored, "interrupted", err}
	case errors.Is(err, budget.ErrShed), errors.Is(err, budget.ErrTooLarge):
		return &stop{Shed, err.Error(), nil}
	case errors.Is(err, context.DeadlineExceeded):
		return &stop{Errored, fmt.Sprintf("a call took longer than %s: %v", r.o.CallTimeout, err), err}
	}
	return &stop{Errored, err.Error(), err}
}

// fatal reports a browser failure no next step can work around.
func fatal(err error) bool {
	return errors.Is(err, browser.ErrCrashed) || errors.Is(err, browser.ErrClosed) || errors.Is(err, browser.ErrLaunch)
}

// outcome is what an action did, in words; a URL on the start page's
// site is written as its path, which is all a prompt needs of it.
func (r *runner) outcome(o browser.Outcome, err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	s := o.String()
	if o.Effect == browser.Navigated && o.URL != "" {
		u := o.URL
		if start, err := url.Parse(r.t.StartURL); err == nil {
			origin := start.Scheme + "://" + start.Host
			if rest, ok := strings.CutPrefix(u, origin); ok && strings.HasPrefix(rest, "/") {
				u = rest
			}
		}
		s += " to " + u
	}
	return s
}

func verdict(v calltypes.Verdict) string {
	if v.Answer {
		return "yes: " + v.Reason
	}
	return "no: " + v.Reason
}

func callLine(c llm.Report) string {
	return fmt.Sprintf("%s, %d reserved, %d used, %s", c.Type, c.TokensReserved, c.TokensUsed, c.Deployment)
}
