package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/llm"
)

// TaskOptions are what RunTask needs besides the task. The zero value runs
// the task as its file describes it: a Chrome launched here, fenced to the
// task's allowed domains (the start URL's host when it names none),
// answered from its replay and its cassette when it names them, and the
// embedded default for a model.
type TaskOptions struct {
	// Config holds the deployments the calls go to; nil is the embedded
	// default. A config of call types alone runs them on the embedded
	// default.
	Config *config.File
	// Caller, when set, makes the calls instead of one opened from Config:
	// several tasks in one process then share one budget client. RunTask
	// leaves it open, and the task's cassette must be the caller's.
	Caller *llm.Caller
	// LLM shapes the caller RunTask opens (a cassette to record, say); the
	// task's cassette is its Replay.
	LLM llm.Options
	// Browser is the browser's starting point: which Chrome, a browser to
	// attach to, timeouts, logs, a recorder. Its AllowedDomains may only
	// narrow the task's; a replay is the task's own.
	Browser browser.Options
	// AllowExtra widens the task's allowed domains on purpose; the result
	// records them (Result.AllowedExtra).
	AllowExtra []string
	// OutDir, when set, gets result.json, report.html and a screenshot per
	// step, each written whole and never through a link.
	OutDir string
	// StorageState, when set, is loaded instead of the task's
	// storage_state: cookies and localStorage in Playwright's format.
	// SaveStorageState, when set, gets the browser's after the run, mode
	// 0600. Either way, only what lies within the allowed domains; the
	// result counts the rest (StorageDropped).
	StorageState     string
	SaveStorageState string
	// Params are values for the task's parameters (Task.Bind), put in
	// before anything opens; none runs a task not bound yet with its
	// defaults, and a bound one as it is.
	Params map[string]string
	// Learned is where learned runs live (OpenLearned); nil runs every
	// step with the model and keeps nothing.
	Learned *learned.Library
	// Session, Progress and CallTimeout are Options'.
	Session     string
	Progress    io.Writer
	CallTimeout time.Duration
}

// RunTask runs a task with one call: it opens what the task describes (the
// caller; the browser fenced to its domains, with its secrets to type by
// name and its session loaded; the replay), runs the task on it (Run),
// closes them, saves the session and writes the outputs when asked, and
// returns the result. The result is whole whatever happened, a Chrome that would not
// start included; the error is set when the run did not end as the task
// meant (ExitCode maps the two to the exit code).
func RunTask(ctx context.Context, t *Task, o TaskOptions) (Result, error) {
	res, err := runTask(ctx, t, o)
	if o.OutDir != "" {
		if werr := WriteOutputs(o.OutDir, &res); werr != nil {
			err = errors.Join(err, &OutputError{Path: o.OutDir, Err: werr})
		}
	}
	return res, err
}

// runTask opens the caller and the browser, runs the task on them, and
// closes them; what failed to close is the run's error too.
func runTask(ctx context.Context, t *Task, o TaskOptions) (res Result, err error) {
	if len(o.Params) > 0 || t.bound == nil {
		bound, err := t.Bind(o.Params)
		if err != nil {
			return failedStart(ctx, t, err), err
		}
		t = bound
	}
	caller, closeCaller, err := callerFor(ctx, t, o)
	if err != nil {
		return failedStart(ctx, t, err), err
	}
	defer func() {
		if cerr := closeCaller(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing the caller: %w", cerr))
		}
	}()
	page, matcher, err := openBrowser(ctx, t, o)
	if err != nil {
		return failedStart(ctx, t, err), err
	}
	res, err = runOn(ctx, t, o, page, caller)
	res.ReplayMissed = missed(matcher, o.Progress)
	return res, err
}

// callerFor is o.Caller, checked against the task, or one opened for it
// (OpenCaller); close closes what it opened.
func callerFor(ctx context.Context, t *Task, o TaskOptions) (c *llm.Caller, close func() error, err error) {
	if o.Caller != nil {
		return o.Caller, func() error { return nil }, fits(t, o.Caller)
	}
	c, err = OpenCaller(ctx, t, o)
	if err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

// DefaultTabs is how many tabs a task's run may have open at once: a
// page and a popup or two it opens (a sign-in, a document), each followed
// inside the fence; a page that opens more has them closed.
const DefaultTabs = 4

// DownloadsDir is the folder, under the output folder, that the pages'
// downloads are saved in.
const DownloadsDir = "downloads"

// openBrowser opens the browser the task describes (taskBrowser) with
// its secrets and its session, and the output folder its screenshots and
// downloads go to.
func openBrowser(ctx context.Context, t *Task, o TaskOptions) (*browser.Page, *replay.Matcher, error) {
	bo, matcher, err := taskBrowser(t, o.Browser, o.AllowExtra)
	if err != nil {
		return nil, nil, err
	}
	if bo.Secrets, err = t.BrowserSecrets(); err != nil {
		return nil, nil, err
	}
	if bo.Files, err = t.BrowserFiles(); err != nil {
		return nil, nil, err
	}
	if bo.Tabs == 0 {
		bo.Tabs = DefaultTabs
	}
	if path := cmp.Or(o.StorageState, t.StorageState); path != "" {
		if bo.StorageState, err = browser.LoadStorageState(path); err != nil {
			return nil, nil, Usage(err) // "storage state FILE:LINE: FIELD ..."
		}
	}
	if o.OutDir != "" {
		if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
			return nil, nil, Usage(err)
		}
		if bo.DownloadDir == "" {
			bo.DownloadDir = filepath.Join(o.OutDir, DownloadsDir)
		}
	}
	page, err := browser.Open(ctx, bo)
	if err != nil {
		return nil, nil, redact.Error(err)
	}
	return page, matcher, nil
}

// runOn runs the task on the page, measuring the memory it takes, and
// closes the page.
func runOn(ctx context.Context, t *Task, o TaskOptions, page *browser.Page, caller *llm.Caller) (Result, error) {
	watch := watchResources(page.PID())
	res, err := Run(ctx, t, Options{Page: page, Caller: caller, Session: o.Session, Progress: o.Progress,
		OutDir: o.OutDir, CallTimeout: o.CallTimeout, AllowExtra: o.AllowExtra, Learned: o.Learned})
	res.StorageDropped = page.StorageDropped()
	if o.SaveStorageState != "" {
		if serr := saveStorage(ctx, page, o.SaveStorageState); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	if cerr := page.Close(); cerr != nil {
		// The task's work is done and its result whole: a browser that
		// did not close cleanly is said, and does not change how it ended.
		progress(o.Progress, "closing the browser: %v", cerr)
	}
	res.Totals.PeakRSSMB, res.Totals.ChromePeakRSSMB = watch.stop()
	return res, err
}

// saveStorage writes the browser's cookies and localStorage, within the
// allowed domains, as Playwright writes them: whole, never through a
// link, readable by the owner alone. A run stopped by a signal still
// saves what it had.
func saveStorage(ctx context.Context, page *browser.Page, path string) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
	}
	s, err := page.StorageState(ctx)
	if err == nil {
		err = s.WriteFile(path)
	}
	if err != nil {
		return &OutputError{Path: path, Err: fmt.Errorf("storage state: %w", err)}
	}
	return nil
}

// missed are the requests the replay could not answer, said on the
// progress writer too: why a replay went differently.
func missed(m *replay.Matcher, w io.Writer) []string {
	if m == nil {
		return nil
	}
	s := m.Stats()
	if s.Misses == 0 {
		return nil
	}
	urls := redact.Copy(s.Missed)
	progress(w, "the replay missed %s (%v): the page asked for what was not recorded", plural.Of(s.Misses, "request"), urls)
	return urls
}

// OpenCaller opens the caller a run of the task calls through, as RunTask
// does when o.Caller is nil: from o.Config (the embedded default when
// nil; a config of call types alone runs them on it), shaped by o.LLM,
// answering from the task's cassette when it names one. A task whose
// answer_type the caller does not know is refused. Close the caller when
// done; pass it as o.Caller to share it between tasks, or to watch it
// while the task runs.
func OpenCaller(ctx context.Context, t *Task, o TaskOptions) (*llm.Caller, error) {
	lo := o.LLM
	lo.Replay = t.Cassette
	var c *llm.Caller
	var err error
	switch {
	case o.Config == nil:
		c, err = openDefault(ctx, lo)
	case o.Config.TypesOnly():
		// Call types and no deployments: tried on the embedded default.
		if lo.Types == nil {
			lo.Types = calltypes.Default()
		}
		if err = o.Config.Apply(lo.Types); err == nil {
			c, err = openDefault(ctx, lo)
		}
	default:
		c, err = llm.Open(ctx, o.Config, lo)
	}
	if err != nil {
		return nil, openError(ctx, err)
	}
	if err := knowsAnswerType(t, c); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// fits refuses a caller given to run a task that names a cassette, when
// it replays none: the task would go to a model its file says it does
// not use. A caller opened elsewhere cannot say which cassette it
// replays, so the one opened for the task is the safe choice.
func fits(t *Task, c *llm.Caller) error {
	if t.Cassette != "" && !c.Cassette.Replaying() {
		return Usage(fmt.Errorf("%s answers from the cassette %s, and the caller given replays none: leave TaskOptions.Caller empty, or open it with OpenCaller", t.File, t.Cassette))
	}
	return knowsAnswerType(t, c)
}

// knowsAnswerType refuses a task whose answer_type the caller has no type
// for, before anything runs.
func knowsAnswerType(t *Task, c *llm.Caller) error {
	if t.AnswerType == "" {
		return nil
	}
	if _, ok := c.Types.Lookup(t.AnswerType); !ok {
		return Usage(fmt.Errorf("%s: answer_type: no call type %q: define it under calltypes: in the config (system, schema, max_tokens)", t.File, t.AnswerType))
	}
	return nil
}

// openError says what a caller that did not open means: a store that did
// not answer is the budget's; anything else is in what the user gave.
func openError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return err
	case errors.Is(err, budget.ErrUnavailable):
		return fmt.Errorf("the budget store (Redis) the config names cannot be reached: %w", err)
	}
	return Usage(err)
}

// taskBrowser is the browser a task runs in: confined to its allowed
// domains (its start URL's host when it names none), narrowed by
// bo.AllowedDomains and widened on purpose by extra; answered from its
// replay when it has one.
func taskBrowser(t *Task, bo browser.Options, extra []string) (browser.Options, *replay.Matcher, error) {
	allowed, err := t.AllowedWith(bo.AllowedDomains, extra)
	if err != nil {
		return bo, nil, Usage(err)
	}
	bo.AllowedDomains = allowed
	bo.Dialogs = t.Dialogs
	if t.Replay == "" {
		return bo, nil, nil
	}
	if bo.Record != nil {
		return bo, nil, Usage(fmt.Errorf("%s replays %s: a replayed run records nothing new; record a live run", t.File, t.Replay))
	}
	a, err := replay.Load(t.Replay)
	if err != nil {
		return bo, nil, Usage(fmt.Errorf("%s: replay: %w", t.File, err))
	}
	m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	bo.Replay = m
	return bo, m, nil
}

// failedStart is the result of a run that never started: no caller, no
// browser. It says why all the same.
func failedStart(ctx context.Context, t *Task, err error) Result {
	res := Result{Task: t.Name, Params: t.params(), Status: Errored, Reason: redact.Error(err).Error(), Steps: []Step{}, Calls: []llm.Report{}}
	if ctx.Err() != nil {
		res.Reason = "interrupted before the run started: " + res.Reason
	}
	return redact.Copy(res)
}
