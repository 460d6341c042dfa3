package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
)

// Each cause maps to its one code, however deep it is wrapped.
func TestExitCodePerCause(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	_, yamlErr := ParseTask("bad.yaml", []byte("name: [\n"))
	wrap := func(err error) error { return fmt.Errorf("llm: call: %w", err) }
	for _, c := range []struct {
		cause  string
		ctx    context.Context
		status Status
		err    error
		code   int
	}{
		{"succeeded", live, Succeeded, nil, ExitOK},
		{"a command's work done", live, "", nil, ExitOK},
		{"failed", live, Failed, nil, ExitFailed},
		{"stuck", live, Stuck, nil, ExitFailed},
		{"the task's token budget", live, BudgetExhausted, nil, ExitFailed},
		{"the task's deadline", live, DeadlineHit, nil, ExitFailed},
		{"interrupted mid-run", stopped, Errored, context.Canceled, ExitInterrupted},
		{"interrupted while Chrome starts", stopped, Errored, &browser.Error{Op: "launch", Kind: browser.ErrLaunch, Err: context.Canceled}, ExitInterrupted},
		{"interrupted after success", stopped, Succeeded, nil, ExitOK},
		{"a task file", live, "", yamlErr, ExitUsage},
		{"a missing cassette", live, "", Usage(wrap(errors.New("open calls.jsonl: no such file or directory"))), ExitUsage},
		{"an input the type refuses", live, "", wrap(&calltypes.InputError{Type: "yes-no", Field: "page", Problem: "is missing"}), ExitUsage},
		{"shed", live, Shed, wrap(budget.ErrShed), ExitBudget},
		{"too large", live, "", wrap(budget.ErrTooLarge), ExitBudget},
		{"Redis down at start", live, "", wrap(budget.ErrUnavailable), ExitBudget},
		{"Redis down mid-run", live, Errored, wrap(budget.ErrUnavailable), ExitBudget},
		{"Chrome does not start", live, Errored, &browser.Error{Op: "launch", Kind: browser.ErrLaunch}, ExitBrowser},
		{"Chrome crashed", live, Errored, &browser.Error{Op: "observe", Kind: browser.ErrCrashed}, ExitBrowser},
		{"the page closed", live, Errored, &browser.Error{Op: "click", Kind: browser.ErrClosed}, ExitBrowser},
		{"a start page that never loads", live, Errored, &browser.Error{Op: "navigate", Kind: browser.ErrLoad}, ExitBrowser},
		{"a navigation the fence refuses", live, Errored, &browser.Error{Op: "navigate", Kind: browser.ErrBlocked}, ExitBrowser},
		{"a replay without the page", live, Errored, &browser.Error{Op: "navigate", Kind: browser.ErrNotRecorded}, ExitFailed},
		{"a cassette without the call", live, Errored, wrap(llm.ErrReplayMismatch), ExitFailed},
		{"an answer no repair made valid", live, Errored, &llm.InvalidOutputError{Type: "click-pick", Err: errors.New("not JSON")}, ExitFailed},
		{"an answer that is not the API's", live, Errored, wrap(&llm.EndpointError{Deployment: "d1", Host: "127.0.0.1:8080", Status: 200, What: "an empty body"}), ExitFailed},
		{"a Retry-After past the deadline", live, "", wrap(&budget.WaitError{Deployment: "d1", Asked: budget.Wait{Seconds: 2.5e11, Header: "Retry-After"}}), ExitBudget},
	} {
		if got := ExitCode(c.ctx, c.status, c.err); got != c.code {
			t.Errorf("%s: exit %d, want %d", c.cause, got, c.code)
		}
	}
}

func TestUsageKeepsWhatItWraps(t *testing.T) {
	inner := &browser.Error{Op: "launch", Kind: browser.ErrLaunch, Detail: "x"}
	err := Usage(fmt.Errorf("config: %w", inner))
	if !errors.Is(err, ErrUsage) || !errors.Is(err, browser.ErrLaunch) || err.Error() != "config: browser: launch: chrome did not start: x" {
		t.Errorf("Usage: %v", err)
	}
	if Usage(nil) != nil || Usage(err) != err {
		t.Error("Usage of nil, or of a usage error")
	}
}
