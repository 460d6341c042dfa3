package llm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// BenchmarkPromptCacheAffinity runs ten-step sessions of a type whose
// stable prefix is past 1,024 tokens (a long system prompt) over two
// and five simulated deployments of one model, with the sessions kept on their
// deployment and without, and reports the share of prompt tokens the
// deployments read from their caches. The cache is the simulator's model
// of Azure's: per deployment, from 1,024 tokens in 128-token blocks.
func BenchmarkPromptCacheAffinity(b *testing.B) {
	for _, c := range []struct {
		name    string
		session bool
		pool    int
	}{{"affinity/2", true, 2}, {"none/2", false, 2}, {"affinity/5", true, 5}, {"none/5", false, 5}} {
		b.Run(c.name, func(b *testing.B) {
			var prompt, cached int64
			for i := range b.N {
				caller, sim := pool(b, c.pool)
				if err := caller.Types.Register(longType()); err != nil {
					b.Fatal(err)
				}
				o := CallOptions{}
				if c.session {
					o.Session = fmt.Sprintf("agent-%d", i)
				}
				for step := range 10 {
					in := asJSON(map[string]string{"goal": fmt.Sprintf("step %d: %s", step, strings.Repeat("the page as it is now ", 20))})
					if _, _, err := caller.Call(context.Background(), "long", in, o); err != nil {
						b.Fatal(err)
					}
				}
				for _, d := range sim.Stats().Deployments {
					prompt += d.PromptTokens
					cached += d.CachedTokens
				}
				caller.Close()
			}
			b.ReportMetric(float64(cached)/float64(prompt), "cached/prompt")
		})
	}
}

// pool is a caller over n simulated gpt-4o deployments whose headroom
// is alike, so that without affinity the router spreads a session's
// calls over them.
func pool(b *testing.B, n int) (*Caller, *azuresim.Sim) {
	b.Helper()
	var ds []azuresim.Deployment
	yaml := "deployments:\n"
	for i := range n {
		name := fmt.Sprintf("d%d", i)
		ds = append(ds, azuresim.Deployment{Name: name, Model: "gpt-4o", TPM: 6_000_000, Reply: "heuristic"})
		yaml += fmt.Sprintf("  - {name: %s, endpoint: ENDPOINT, deployment: %s, model: gpt-4o, tpm: 1000000, auth: {api_key_env: K}}\n", name, name)
	}
	sim, err := azuresim.New(azuresim.Config{Deployments: ds}, azuresim.Options{Models: heuristicModels()})
	if err != nil {
		b.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { run.Close() })
	f, _, err := config.Parse("headroom.yaml", []byte(strings.ReplaceAll(yaml, "ENDPOINT", run.URL)))
	if err != nil {
		b.Fatal(err)
	}
	c, err := Open(context.Background(), f, Options{Types: calltypes.Default(), Dispatcher: DispatcherOptions{Getenv: func(string) string { return "k" }}})
	if err != nil {
		b.Fatal(err)
	}
	return c, sim
}
