package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// Exit codes: how a command that does any part of a task's work ends, the
// same for every command of headroom, so that a fleet's scheduler can tell
// a task that failed from one it should run again.
const (
	ExitOK          = 0   // the task succeeded, or the command did its work
	ExitFailed      = 1   // the work ran and failed
	ExitUsage       = 2   // bad usage: a flag, or a file named, that is wrong or missing
	ExitBudget      = 3   // the budget could not be had in time
	ExitBrowser     = 4   // the browser failed, or the page could not be reached
	ExitInterrupted = 130 // stopped by SIGINT or SIGTERM
)

// ErrUsage is wrapped by errors in what the user gave: a flag, a task, a
// config, steps, a HAR, a cassette or an input file that is wrong, missing
// or unreadable. ExitCode maps it to ExitUsage.
var ErrUsage = errors.New("bad usage")

// Usage marks err as bad usage (errors.Is(err, ErrUsage)); it says what
// err says and wraps what err wraps. Usage(nil) is nil.
func Usage(err error) error {
	if err == nil || errors.Is(err, ErrUsage) {
		return err
	}
	return usageError{err}
}

type usageError struct{ error }

func (e usageError) Unwrap() []error { return []error{e.error, ErrUsage} }

// An ExitCause is one row of the table ExitCode reads: a cause, in words,
// and its code.
type ExitCause struct {
	Code  int
	Cause string
	is    func(ctx context.Context, s Status, err error) bool
}

// exitCauses is the table, in the order ExitCode reads it: the first row
// whose cause holds decides. s is the task's status ("" for a command that
// runs no task); err is what stopped the work, nil when nothing did.
var exitCauses = []ExitCause{
	{ExitOK, "the task succeeded, or the command did its work", func(_ context.Context, s Status, err error) bool {
		return err == nil && (s == "" || s == Succeeded)
	}},
	{ExitInterrupted, "interrupted: SIGINT or SIGTERM, whatever the work was doing (launching Chrome, waiting for budget, a call)", func(ctx context.Context, _ Status, _ error) bool {
		return ctx.Err() != nil
	}},
	{ExitUsage, "bad usage: a flag, or a task, config, steps, HAR, cassette or input file that is wrong, missing or unreadable", func(_ context.Context, _ Status, err error) bool {
		var ye *yamlconf.Error
		var ie *calltypes.InputError
		return errors.Is(err, ErrUsage) || errors.As(err, &ye) || errors.As(err, &ie)
	}},
	{ExitBudget, "the budget: a call shed (a 429 asking to wait past its deadline among them), or too large for every deployment, or the budget store (Redis) unreachable, at start or mid-run", func(_ context.Context, s Status, err error) bool {
		return s == Shed || errors.Is(err, budget.ErrShed) || errors.Is(err, budget.ErrTooLarge) || errors.Is(err, budget.ErrUnavailable)
	}},
	{ExitFailed, "a replay without the page asked for: the browser is fine, the recording went elsewhere", func(_ context.Context, _ Status, err error) bool {
		return errors.Is(err, browser.ErrNotRecorded)
	}},
	{ExitBrowser, "the browser: Chrome did not start, crashed or closed; a page did not load; a navigation the allowed domains refuse", func(_ context.Context, _ Status, err error) bool {
		for _, kind := range []error{browser.ErrLaunch, browser.ErrCrashed, browser.ErrClosed, browser.ErrLoad, browser.ErrBlocked} {
			if errors.Is(err, kind) {
				return true
			}
		}
		return false
	}},
	{ExitFailed, "anything else: the goal unmet, stuck, a step failed, the task's token budget or deadline reached, a cassette without the call asked for, an answer no repair made valid, an answer that is not the API's (a proxy's page, a body cut short or past its bound, a redirect)", func(context.Context, Status, error) bool {
		return true
	}},
}

// ExitCauses is the table ExitCode reads, in its order, for help texts
// and docs: a copy, so the table itself stays as it is.
func ExitCauses() []ExitCause { return slices.Clone(exitCauses) }

// ExitCode is the exit code for work that ended with status s (the task's;
// "" when the command runs none) and err, by the table (ExitCauses).
func ExitCode(ctx context.Context, s Status, err error) int {
	for _, c := range exitCauses {
		if c.is(ctx, s, err) {
			return c.Code
		}
	}
	return ExitFailed
}
