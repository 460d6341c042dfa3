package llm

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// fallbackCaller is a caller whose default pool is one gpt-4o deployment
// of primaryTPM (as the budget counts it) and whose fallback pool is a
// roomy o4-mini, both on one simulator over HTTP.
func fallbackCaller(t *testing.T, primaryTPM int64, share *float64) *Caller {
	t.Helper()
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "big", Model: "gpt-4o", TPM: 6_000_000, Reply: "heuristic"},
		{Name: "small", Model: "o4-mini", TPM: 6_000_000, Reply: "heuristic"},
	}}, azuresim.Options{Models: heuristicModels()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	f := &config.File{
		Budget: budget.Config{Deployments: []budget.Deployment{
			{Name: "big", Endpoint: ts.URL, Model: "gpt-4o", TPM: primaryTPM, Auth: budget.Auth{APIKeyEnv: "K"}},
			{Name: "small", Endpoint: ts.URL, Model: "o4-mini", TPM: 6_000_000, Pool: "small", Auth: budget.Auth{APIKeyEnv: "K"}},
		}},
		Fallback: &config.Fallback{Pool: "small", Share: share},
	}
	c, err := Open(context.Background(), f, Options{Dispatcher: DispatcherOptions{Getenv: func(string) string { return "k" }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// With the primary pool out of room, every call it cannot serve before
// its deadline completes on the fallback, shaped for the fallback's
// family, counted and marked.
func TestAnExhaustedPrimaryDegradesToTheFallback(t *testing.T) {
	c := fallbackCaller(t, 3_000, new(0.0))
	served := map[bool]int{}
	for range 12 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, rep, err := c.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{})
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", served[true]+served[false], err)
		}
		served[rep.Fallback]++
		if rep.Fallback && (rep.Deployment != "small" || rep.ReasoningEffort != "low" || rep.MaxTokens != 64+1024) {
			t.Errorf("a fallback call's report %+v: want small, shaped for o4-mini", rep)
		}
		if !rep.Fallback && rep.Deployment != "big" {
			t.Errorf("a primary call's report %+v", rep)
		}
	}
	st := c.Stats()[calltypes.YesNo]
	if served[true] < 10 || st.Fallback != int64(served[true]) || st.FallbackWarm != 0 {
		t.Errorf("served %v, stats %+v: want most on the fallback, every one counted", served, st)
	}
}

// With room on the primary, the fallback still gets its share, exactly,
// so the path is never cold.
func TestTheFallbackGetsItsShareWhileThePrimaryServes(t *testing.T) {
	c := fallbackCaller(t, 6_000_000, new(0.05))
	fallback := 0
	for range 200 {
		_, rep, err := c.Call(context.Background(), calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Fallback {
			fallback++
		}
	}
	st := c.Stats()[calltypes.YesNo]
	if fallback != 10 || st.Fallback != 10 || st.FallbackWarm != 10 {
		t.Errorf("%d of 200 on the fallback (stats %+v), want 10 (5%%), all warm", fallback, st)
	}
}
