package burst

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Headroom is headroom's own strategy: every request goes through the
// budget router, which reserves it before it is sent, spaces admissions at
// the deployment's request rate and has the rest wait their turn in its
// queue, so the deployment is never asked for more than it has.
func Headroom() Strategy {
	return Strategy{
		Name: "headroom",
		Desc: "budget router: reserve before sending, spaced at the quota",
		Run: func(ctx context.Context, t Target, n, maxAttempts int) Row {
			cfg := &budget.Config{
				Window: t.minute(),
				Deployments: []budget.Deployment{{
					// Requests go out through Measure's sender; the router
					// only places them, so the endpoint is a placeholder.
					Name: "burst", Endpoint: "https://burst.invalid", Model: "gpt-4o",
					TPM: int64(t.RPM) * 1000 / 6, RPM: int64(t.RPM), Auth: budget.Auth{APIKeyEnv: "UNUSED"},
				}},
			}
			if _, err := cfg.Validate(); err != nil {
				panic(err) // built from constants and a positive RPM: a bug
			}
			extra := max(0, maxAttempts-1) // the pool has one deployment
			router, err := budget.NewRouter(budget.NewMemStore(budget.MemOptions{Window: cfg.Window}), cfg, budget.RouterOptions{ExtraWaits: &extra})
			if err != nil {
				panic(err)
			}
			// What the client reserves, which is what Azure charges.
			cost := llm.Estimate([]tokens.Message{{Role: "user", Content: chatPrompt}}, chatMaxTokens, 1)
			return Measure(ctx, "headroom", t, n, func(ctx context.Context, _ int, attempt Send) bool {
				_, _, err := router.Do(ctx, budget.Call{Tokens: cost}, func(ctx context.Context, _ *budget.Lease) budget.Outcome {
					// When the request left, for the pacing's lag, as
					// llm.Dispatcher reports it.
					var wrote atomic.Int64
					ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
						WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Now().UnixNano()) },
					})
					status, h, err := attempt(ctx)
					o := budget.Outcome{Sent: true, Status: status, Header: h, Err: err}
					if w := wrote.Load(); w > 0 {
						o.Wrote = time.Unix(0, w)
					}
					return o
				})
				return err == nil
			})
		},
	}
}
