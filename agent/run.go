package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/redact"
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
	// AllowExtra are domains beyond the task's allowed domains that the
	// page may reach, given on purpose; the result records them. Run
	// refuses a page that reaches further than the task allows and these.
	AllowExtra []string
	// Learned, when set, is where the task's learned runs live: a run
	// whose success check passed is kept there, and a later run of the
	// same template follows it with no model call until the page differs.
	Learned *learned.Library
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

// Run takes the task on a page and a caller opened by the caller of Run
// (RunTask opens them from the task): the scripted steps as written, and
// for each sub-goal (the goal itself when there are none) a plan, then
// steps of observe, pick, act and, where the outcome is ambiguous, a
// yes-no check, until the model is done, the task's bounds stop it, or it
// is stuck; then a summary answers the goal. A start page that does not
// load ends the run before any call. The result is whole even when Run
// stops early; the error is set only when the run failed (status error),
// and says why: the browser, the model, or the context.
//
// Run refuses a page that may reach more than the task allows (its
// allowed domains, or its start URL's host) and o.AllowExtra. A task not
// bound (Task.Bind) runs with its parameters' defaults.
func Run(ctx context.Context, t *Task, o Options) (Result, error) {
	if t.bound == nil {
		// A task not bound yet runs with its defaults, and one with a
		// parameter that has none stops here, naming it.
		bound, err := t.Bind(nil)
		if err != nil {
			return failedStart(ctx, t, err), err
		}
		t = bound
	}
	if err := check(t, o); err != nil {
		return failedStart(ctx, t, err), err
	}
	r := newRunner(t, o)
	if r.res.Model = o.Caller.StandIn; r.res.Model != "" {
		r.progress("model: %s", r.res.Model)
	}
	start := time.Now()
	err := r.run(ctx)
	r.settle(ctx)
	r.res.Totals.ElapsedMS = time.Since(start).Milliseconds()
	r.total()
	r.res.Refused, r.res.ClosedTabs = o.Page.Blocked(), o.Page.ClosedTabs()
	r.res.Downloads = o.Page.Downloads()
	r.res.AllowedDomains, _ = o.Page.Allowed()
	r.res.AllowedExtra = t.extraDomains(o.Page)
	o.Caller.CountRun(string(r.res.Status)) // the fleet reads tokens per task over these
	// What a page showed, a server answered or a model wrote may hold a
	// secret the run learned along the way: the result is written with
	// none (redact.Text on every string), wherever it goes next.
	return redact.Copy(r.res), redact.Error(err)
}

// check refuses what Run cannot keep the task's promises with: no page or
// no caller, a page fenced wider than the task, a success pattern that is
// not one.
func check(t *Task, o Options) error {
	if o.Page == nil || o.Caller == nil {
		return errors.New("agent: Run needs Options.Page and Options.Caller")
	}
	if wider := outside(t.extraDomains(o.Page), o.AllowExtra); len(wider) > 0 {
		what := strings.Join(wider, ", ")
		if wider[0] == "*" {
			what = "any host"
		}
		return Usage(fmt.Errorf("%s: the page may reach %s, beyond the task's allowed domains (%s): open it with AllowedDomains: t.Allowed(), name the extra domains in Options.AllowExtra, or let RunTask open it",
			t.Name, what, strings.Join(t.Allowed(), ", ")))
	}
	if s := t.Success; s != nil {
		if err := s.compile(); err != nil {
			return Usage(fmt.Errorf("%s: success.url: not a regular expression: %w", t.Name, err))
		}
	}
	return nil
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
	learn    *learning // nil when the run neither follows nor keeps a learned run
	// heldAfter is how many steps the run had taken when the success
	// check last held; -1 before it has.
	heldAfter int
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
	return &runner{t: t, o: o, page: o.Page, seen: map[string]int{}, heldAfter: -1,
		res: Result{Task: t.Name, Params: t.params(), Status: Errored, Steps: []Step{}, Calls: []llm.Report{}}}
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
	if err := r.open(ctx); err != nil {
		return err
	}
	r.startLearning(ctx)
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
		ok, err := r.goal(ctx, i, s.Agent, i == len(steps)-1)
		if err != nil {
			return err
		}
		met = met && ok
	}
	return r.finish(ctx, met)
}

// goal reaches one goal: by its learned steps when there are any and the
// page still fits them, else (or from where they stopped) with the model.
func (r *runner) goal(ctx context.Context, i int, goal string, last bool) (bool, error) {
	if r.learn != nil {
		r.learn.beginGoal(i)
		if ok, err := r.follow(ctx, i, last); err != nil || ok {
			return ok, err
		}
	}
	return r.pursue(ctx, goal, last)
}

// settle ends the run's part in learned runs: a verified run's steps
// kept, the lease to learn given back, the tokens saved added up.
func (r *runner) settle(ctx context.Context) {
	if r.learn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	r.keep(ctx)
	r.release()
	r.res.Totals.TokensSaved = r.learn.res.TokensSaved
}

// open loads the start page. One that does not load, or that the allowed
// domains refuse, ends the run as the browser's failure, before any call:
// there is nothing for a model to read.
func (r *runner) open(ctx context.Context) error {
	_, err := r.page.Navigate(ctx, r.t.StartURL)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil || fatal(err):
		return err
	case errors.Is(err, browser.ErrLoad), errors.Is(err, browser.ErrBlocked):
		return &stop{Errored, fmt.Sprintf("the start page: %v", err), err}
	}
	return err
}

// scripted takes one scripted step; a step that fails fails the task.
func (r *runner) scripted(ctx context.Context, i int, s browser.Step) error {
	began := time.Now()
	a := s.Action(r.o.OutDir)
	out, err := r.page.Do(ctx, a)
	a.Text = shown(a.Text, out.Secret)
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

// answerPage is the page the goal is answered from. The answer may be in
// a file the run downloaded rather than on the page: it shows the last
// few saved (maxAnswerFiles), however long ago; the view keeps each
// one's note whatever its cap, so a run of many downloads cannot crowd
// the page out.
func (r *runner) answerPage(ctx context.Context) (*browser.Snapshot, error) {
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return nil, err
	}
	saved := slices.DeleteFunc(r.page.Downloads(), func(d browser.Download) bool { return !d.Saved })
	snap.Downloads = saved[max(0, len(saved)-maxAnswerFiles):]
	return snap, nil
}

// maxAnswerFiles bounds the downloaded files the answering call is shown.
const maxAnswerFiles = 3

// finish answers the goal from the page the task ended on, and settles
// the status.
func (r *runner) finish(ctx context.Context, met bool) error {
	if r.learn.replayedWhole() && summaryOptional(r.t) {
		if ok, err := r.stillHolds(ctx); err != nil || ok {
			// Replayed and verified, and the goal asks for nothing back:
			// the summary it skips is saved too.
			r.learn.res.TokensSaved += r.learn.entry.SummaryReserved
			return r.verified(err)
		}
	}
	if ok, err := r.learnedAnswer(ctx); err != nil || ok {
		return r.verified(err)
	}
	snap, err := r.answerPage(ctx)
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
		out, rep, err := callNamed(ctx, r, r.t.AnswerType, in, r.sight(ctx, answer, snap, false))
		r.res.Calls = append(r.res.Calls, rep)
		if err != nil {
			return err
		}
		r.res.Data, r.res.Answer = out, string(out)
	} else {
		s, rep, err := call(ctx, r, calltypes.SummaryCall, in, r.sight(ctx, answer, snap, false))
		r.res.Calls = append(r.res.Calls, rep)
		if err != nil {
			return err
		}
		r.res.Answer = s.Answer
		if r.learn != nil {
			r.learn.answer = r.learn.answerOf(snap, s.Answer)
		}
	}
	if r.learn != nil {
		r.learn.summary = true
	}
	r.progress("answer  %s  (%s)", clip(r.res.Answer, 120), callLine(r.res.Calls[len(r.res.Calls)-1]))
	if r.t.Success != nil {
		ok, err := r.stillHolds(ctx)
		switch {
		case err != nil:
			return err
		case !ok:
			return &stop{Failed, "the final page does not pass the success check (" + r.t.Success.String() + ")", nil}
		}
		return r.verified(nil)
	}
	if !met {
		return &stop{Failed, "the goal was not met", nil}
	}
	r.res.Status, r.res.SuccessBy = Succeeded, SuccessJudged
	r.res.Reason = "judged by the model: it found the goal met on the page (the task has no success check to verify it)"
	return nil
}

// verified settles a run whose success check passed.
func (r *runner) verified(err error) error {
	if err != nil {
		return err
	}
	r.res.Status, r.res.SuccessBy = Succeeded, SuccessChecked
	r.res.Reason = "verified: the final page passes the task's success check (" + r.t.Success.String() + ")"
	if r.learn.replayedWhole() {
		r.res.Reason += ", every step replayed from what was learned"
	}
	return nil
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
		PromptTokens: c.PromptTokens, CachedTokens: c.CachedTokens, Images: c.Images, ImageTokens: c.ImageTokens, TokensReserved: c.TokensReserved, TokensUsed: c.TokensUsed, TokensSaved: r.res.Totals.TokensSaved,
		ModelMS: c.LatencyMS, Retries: c.Retries, RateLimited: c.RateLimited, StoreWritesFailed: c.StoreWritesFailed,
	}
	for _, rep := range all {
		t := &r.res.Totals
		switch {
		case rep.Invalid:
			t.Invalid++
		case rep.Repaired:
			t.Repaired++
		case len(rep.Mends) > 0:
			t.Mended++
		}
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
		s := "failed: " + err.Error()
		for _, d := range o.Dialogs {
			s += "; " + d.String()
		}
		return s
	}
	s := string(o.Effect)
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
	// Then what the outcome says beyond its effect: its detail (opened
	// in a new tab), its dialogs and downloads.
	return s + strings.TrimPrefix(o.String(), string(o.Effect))
}

func verdict(v calltypes.Verdict) string {
	if v.Answer {
		return "yes: " + v.Reason
	}
	return "no: " + v.Reason
}

func callLine(c llm.Report) string {
	line := fmt.Sprintf("%s, %d reserved, %d used, %s", c.Type, c.TokensReserved, c.TokensUsed, c.Deployment)
	if c.Images > 0 {
		line += fmt.Sprintf(", %d image tokens", c.ImageTokens)
	}
	if c.CachedTokens > 0 {
		line += fmt.Sprintf(", %d cached", c.CachedTokens)
	}
	if c.TierFallback != "" {
		line += ", " + c.TierFallback + " refused: default tier"
	}
	return line
}
