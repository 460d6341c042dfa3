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
// Its links go there three ways, by how: "navigate" loads the next page;
// "in-place" rewrites the page where it is, in the click's own handler;
// "fetch" asks the server for the next page's body (20 ms to answer)
// and writes it in when it comes.
func archive(how string) *httptest.Server {
	body := func(n int) string {
		link := func(to int, text string) string {
			if how == "navigate" {
				return fmt.Sprintf(`<a href="/p%d">%s</a>`, to, text)
			}
			return fmt.Sprintf(`<a href="#p%d" onclick="show(%d); return false">%s</a>`, to, to, text)
		}
		return fmt.Sprintf(`<h1>Archive page %d</h1>
<p>Entries %d to %d of the stable archive: saddles, bridles and stirrups.</p>
%s %s<input placeholder="search">`, n, n*10, n*10+9, link(n+1, "next page"), link(n+3, "skip ahead"))
	}
	show := map[string]string{
		"in-place": `const pages = {}; function show(n) { document.title = 'Archive page ' + n; main.innerHTML = pages[n]; }`,
		"fetch":    `function show(n) { fetch('/body/' + n).then(r => r.text()).then(t => { document.title = 'Archive page ' + n; main.innerHTML = t; }); }`,
	}[how]
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		switch {
		case how == "fetch" && strings.HasPrefix(r.URL.Path, "/body/"):
			if _, err := fmt.Sscanf(r.URL.Path, "/body/%d", &n); err != nil {
				http.NotFound(w, r)
				return
			}
			time.Sleep(20 * time.Millisecond)
			fmt.Fprint(w, body(n))
			return
		default:
			if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &n); err != nil || n < 1 {
				http.NotFound(w, r)
				return
			}
		}
		script := ""
		if how == "in-place" {
			// Every page the walk can reach, ready in the document.
			var pages []string
			for i := n; i <= n+3*steps+3; i++ {
				pages = append(pages, fmt.Sprintf("pages[%d] = %q;", i, body(i)))
			}
			script = strings.Join(pages, "\n")
		}
		fmt.Fprintf(w, `<html><head><title>Archive page %d</title></head><body><main id="main">%s</main>
<script>%s
%s</script></body></html>`, n, body(n), show, script)
	}))
}

const steps = 25

func walk(b *testing.B, types *calltypes.Registry) agent.Result {
	return walkBy(b, types, "navigate")
}

// walkBy walks the archive whose links go to the next page how.
func walkBy(b *testing.B, types *calltypes.Registry, how string) agent.Result {
	site := archive(how)
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
		b.ReportMetric(pickPrompt(capped, 3), "pick-prompt-step3")
		b.ReportMetric(pickPrompt(capped, steps), "pick-prompt-step25")
		b.ReportMetric(pickPrompt(capped, steps)/pickPrompt(capped, 3), "step25/step3")
		b.ReportMetric(perStep(capped), "reserved/step")
		reportAgentTime(b, capped)
	})
	// The agent's own time when a click changes the page without leaving
	// it: written at once, or after the server's answer.
	for _, how := range []string{"in-place", "fetch"} {
		b.Run(how, func(b *testing.B) {
			var r agent.Result
			for range b.N {
				r = walkBy(b, calltypes.Default(), how)
			}
			if r.Steps[1].Outcome == "" || !strings.HasPrefix(r.Steps[1].Outcome, "changed") {
				b.Errorf("step 2's click did %q, want a change in place", r.Steps[1].Outcome)
			}
			reportAgentTime(b, r)
		})
	}
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

// reportAgentTime reports the median and 95th percentile of the agent's
// own time per step, the model's latency left out.
func reportAgentTime(b *testing.B, r agent.Result) {
	var ms []int64
	for _, s := range r.Steps {
		ms = append(ms, s.AgentMS)
	}
	b.ReportMetric(quantile(ms, 0.5), "agent-ms-p50")
	b.ReportMetric(quantile(ms, 0.95), "agent-ms-p95")
}
