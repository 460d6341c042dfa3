// Package agent measures the agent on a long task: whether its prompts
// stay flat as steps grow, what a step charges against the rate limit
// with the types' caps and with a flat 4,096, and the agent's own time per
// step, the model's latency left out.
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/agent
package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// archive serves pages linked one to the next, none of which holds what
// the goal asks for: an agent walks it for as many steps as it is given.
func archive() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &n); err != nil || n < 1 {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<html><head><title>Archive page %d</title></head><body><h1>Archive page %d</h1>
<p>Entries %d to %d of the stable archive: saddles, bridles and stirrups.</p>
<a href="/p%d">next page</a> <a href="/p%d">skip ahead</a><input placeholder="search"></body></html>`,
			n, n, n*10, n*10+9, n+1, n+3)
	}))
}

const steps = 25

func walk(b *testing.B, types *calltypes.Registry) agent.Result {
	site := archive()
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chrometest.Require(b)
	// Closed at each walk's end, not the benchmark's: b.N walks would
	// otherwise keep b.N browsers.
	page, err := browser.Open(ctx, browser.Options{AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		b.Fatalf("Chrome is installed but the page did not open: %v", err)
	}
	defer func() {
		if err := page.Close(); err != nil {
			b.Errorf("closing the page: %v", err)
		}
	}()
	caller, err := embedded.Open(ctx, llm.Options{Types: types})
	if err != nil {
		b.Fatal(err)
	}
	defer caller.Close()
	task := &agent.Task{Name: "long-walk", StartURL: site.URL + "/p1",
		Goal: "Find the page that lists the price of a unicorn saddle and report the price.", MaxSteps: steps}
	res, _ := agent.Run(ctx, task, agent.Options{Page: page, Caller: caller})
	if len(res.Steps) < steps {
		b.Fatalf("%d steps (%s: %s), want %d", len(res.Steps), res.Status, res.Reason, steps)
	}
	return res
}

// pickPrompt is the prompt tokens of step n's click-pick call.
func pickPrompt(r agent.Result, n int) float64 {
	for _, c := range r.Steps[n-1].Calls {
		if c.Type == calltypes.ClickPick {
			return float64(c.PromptTokens)
		}
	}
	return 0
}

// perStep is what the run reserved, over its steps.
func perStep(r agent.Result) float64 {
	return float64(r.Totals.TokensReserved) / float64(len(r.Steps))
}

func quantile(ms []int64, q float64) float64 {
	s := slices.Clone(ms)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(q*float64(len(s))))])
}

// BenchmarkLongTask walks 25 steps with the shipped caps, then with every
// built-in type's cap at a flat 4,096, on the same pages.
func BenchmarkLongTask(b *testing.B) {
	var capped agent.Result
	b.Run("caps", func(b *testing.B) {
		for range b.N {
			capped = walk(b, calltypes.Default())
		}
		var agentMS []int64
		for _, s := range capped.Steps {
			agentMS = append(agentMS, s.AgentMS)
		}
		b.ReportMetric(pickPrompt(capped, 3), "pick-prompt-step3")
		b.ReportMetric(pickPrompt(capped, steps), "pick-prompt-step25")
		b.ReportMetric(pickPrompt(capped, steps)/pickPrompt(capped, 3), "step25/step3")
		b.ReportMetric(perStep(capped), "reserved/step")
		b.ReportMetric(quantile(agentMS, 0.5), "agent-ms-p50")
		b.ReportMetric(quantile(agentMS, 0.95), "agent-ms-p95")
	})
	b.Run("flat-4096", func(b *testing.B) {
		flat := calltypes.Default()
		for _, t := range flat.Types() {
			if err := flat.Override(t.Name, calltypes.Override{MaxTokens: 4096}); err != nil {
				b.Fatal(err)
			}
		}
		var r agent.Result
		for range b.N {
			r = walk(b, flat)
		}
		b.ReportMetric(perStep(r), "reserved/step")
		if capped.Steps != nil {
			b.ReportMetric(perStep(r)/perStep(capped), "flat/caps")
		}
		var kinds []string
		for _, s := range r.Steps[:3] {
			kinds = append(kinds, s.Action)
		}
		b.Logf("first steps: %s", strings.Join(kinds, "; "))
	})
}
