package redisstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// A caller tells the fleet's census the prompt tokens its calls were
// counted and the part read from a cache, by deployment, when it checks
// in and when it closes; another store reads them back as budget top
// does. The calls are of a type whose system prompt is past the 1,024
// tokens a cache starts at, on the simulator over HTTP.
func TestACallerTellsTheCensusItsCachedShare(t *testing.T) {
	f := simFleet(t, "prompt", fmt.Sprintf(`calltypes:
  long: {max_tokens: 32, system: %q, schema: {type: object, additionalProperties: false, properties: {goal: {type: string}}, required: [goal]}}
`, strings.Repeat("Read the whole page before you choose. ", 300)))
	ctx := context.Background()
	c, err := llm.Open(ctx, f, llm.Options{Types: calltypes.Default(), Dispatcher: llm.DispatcherOptions{Getenv: func(string) string { return "k" }}})
	if err != nil {
		t.Fatal(err)
	}
	var want budget.PromptTokens
	for _, goal := range []string{"find a desk", "find a lamp", "find a chair"} {
		_, rep, err := c.Call(ctx, "long", []byte(fmt.Sprintf(`{"goal": %q}`, goal)), llm.CallOptions{Session: "agent-1"})
		if err != nil {
			t.Fatal(err)
		}
		want.Prompt, want.Cached = want.Prompt+rep.PromptTokens, want.Cached+rep.CachedTokens
	}
	if err := c.Close(); err != nil { // the last check-in tells what is pending
		t.Fatal(err)
	}
	store, err := budget.OpenStore(ctx, &f.Budget)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	census, _ := store.Census()
	n, err := census.Count(ctx, "d")
	if err != nil || n.Prompt["d"] != want || want.Cached == 0 {
		t.Errorf("the census holds %+v (%v), the calls were counted %+v", n.Prompt["d"], err, want)
	}
}

// simFleet is a config of one deployment, d, on the simulator over HTTP
// (the heuristic stand-in answering), on the tests' Redis under a prefix
// of its own, with more YAML after it.
func simFleet(t *testing.T, prefix, more string) *config.File {
	t.Helper()
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{Name: "d", Model: "gpt-4o", TPM: 1_000_000, Reply: "h"}}},
		azuresim.Options{Models: map[string]azuresim.Model{"h": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	f, _, err := config.Parse("headroom.yaml", []byte(fmt.Sprintf(`redis: %s
redis_prefix: %s%d
deployments:
  - {name: d, endpoint: %s, model: gpt-4o, tpm: 1000000, auth: {api_key_env: K}}
%s`, redistest.URL(t), prefix, time.Now().UnixNano(), run.URL, more)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
