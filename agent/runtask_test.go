package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// deadURL is a URL nothing listens at.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

// A start page that does not load, or that the allowed domains refuse,
// ends the run as the browser's failure before any model call; the
// outputs are written all the same.
func TestRunTaskEndsOnAStartPageItCannotOpen(t *testing.T) {
	chrometest.Require(t)
	dead := deadURL(t)
	for _, c := range []struct {
		name string
		task agent.Task
		o    agent.TaskOptions
		kind error
		want string
	}{
		{"dead", agent.Task{Name: "dead", StartURL: dead, Goal: "Report the page title."}, agent.TaskOptions{}, browser.ErrLoad, "connection refused"},
		{"refused", agent.Task{Name: "refused", StartURL: dead, Goal: "Report the page title.", AllowedDomains: []string{"127.0.0.1", "localhost"}},
			agent.TaskOptions{Browser: browser.Options{AllowedDomains: []string{"localhost"}}}, browser.ErrBlocked, "outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c.o.OutDir = t.TempDir()
			res, err := agent.RunTask(ctx, &c.task, c.o)
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want %v", err, c.kind)
			}
			if code := agent.ExitCode(ctx, res.Status, err); code != agent.ExitBrowser || res.Status != agent.Errored {
				t.Errorf("status %s, exit %d: want error and %d", res.Status, code, agent.ExitBrowser)
			}
			if res.Totals.Calls != 0 || len(res.Steps) != 0 {
				t.Errorf("%d calls and %d steps on a page that never opened", res.Totals.Calls, len(res.Steps))
			}
			if !strings.Contains(res.Reason, "start page") || !strings.Contains(res.Reason, c.want) {
				t.Errorf("reason %q: want the start page and %q", res.Reason, c.want)
			}
			b, err := os.ReadFile(filepath.Join(c.o.OutDir, "result.json"))
			var written agent.Result
			if err != nil || json.Unmarshal(b, &written) != nil || written.Status != agent.Errored {
				t.Errorf("result.json: %v %s", err, b)
			}
		})
	}
}

// Run keeps the task's allowlist itself: a page that may reach more than
// the task allows is refused before anything runs, unless the extra
// domains are given on purpose.
func TestRunRefusesAPageWiderThanTheTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caller, err := embedded.Open(ctx, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	task := &agent.Task{Name: "narrow", StartURL: deadURL(t), Goal: "Report the page title.", AllowedDomains: []string{"127.0.0.1"}}
	for _, c := range []struct {
		name    string
		allowed []string
		extra   []string
		refused bool
	}{
		{"unconfined", nil, nil, true},
		{"wider", []string{"127.0.0.1", "example.org"}, nil, true},
		{"wider on purpose", []string{"127.0.0.1", "example.org"}, []string{"example.org"}, false},
		{"the task's own", []string{"127.0.0.1"}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := chrometest.Open(t, ctx, browser.Options{AllowedDomains: c.allowed})
			res, err := agent.Run(ctx, task, agent.Options{Page: page, Caller: caller, AllowExtra: c.extra})
			usage := errors.Is(err, agent.ErrUsage)
			if usage != c.refused {
				t.Fatalf("refused %v (%v), want %v", usage, err, c.refused)
			}
			if c.refused && (res.Totals.Calls != 0 || !strings.Contains(err.Error(), "beyond the task's allowed domains")) {
				t.Errorf("%d calls; error %v", res.Totals.Calls, err)
			}
		})
	}
}
