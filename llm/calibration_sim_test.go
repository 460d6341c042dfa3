package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/learning"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// load makes calls from workers goroutines until the deadline, and
// returns the 429s the router met.
func load(t *testing.T, f *fixture, workers int, until time.Time, maxTokens int64) {
	t.Helper()
	msgs := []tokens.Message{{Role: "user", Content: strings.Repeat("the price of the blue kettle is listed below. ", 20)}}
	cost := Estimate(msgs, maxTokens, 1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(until) {
				ctx, cancel := context.WithDeadline(context.Background(), until)
				_, _, err := f.disp.Chat(ctx, budget.Call{Tokens: cost}, chat(msgs[0].Content, maxTokens))
				cancel()
				if err != nil && !errors.Is(err, budget.ErrShed) && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("call: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRouterLearnsHowAzureCounts runs a router over the simulator with
// Azure's estimate skewed both ways: the fleet learns the ratio from the
// headers, within 2%, tightens its safety share, and never aims past the
// limit as Azure counts it. The skew is the simulator's secret: nothing
// but the headers tells the client.
func TestRouterLearnsHowAzureCounts(t *testing.T) {
	for _, scale := range []float64{1.1, 0.9} {
		t.Run(fmt.Sprint(scale), func(t *testing.T) {
			// A window long enough that a machine busy with the rest of
			// the suite does not carry calls from one into the next, which
			// the learner rightly reads as a sliding window and widens for.
			const window = 3 * time.Second
			f := newFixture(t, azuresim.Config{Window: window, Seed: 1, Deployments: []azuresim.Deployment{
				{Name: "a", TPM: 40000, RPM: 6000, Reply: "fixed", OutputTokens: 8, EstimateScale: scale},
			}}, "window: 3s\n"+strings.Replace(deployments("a:40000"), "tpm: 40000", "tpm: 40000, rpm: 6000", 1))
			// Eight windows: a busy machine can bend one window's slope
			// (the first calls dial, and arrive out of order), and the
			// ratio needs the windows after it to average that out.
			history := watchRatio(t, f, window)
			load(t, f, 12, time.Now().Add(8*window), 400)

			c := f.router.Calibrations()["a"]
			if math.Abs(c.Ratio-scale)/scale > 0.02 {
				t.Errorf("learned ratio %.4f, want %.2f within 2%% (%+v)", c.Ratio, scale, c)
			}
			p := learning.Policy{Window: window}
			if c.Safety >= 1-budget.DefaultMargin {
				t.Errorf("safety share %v never came down from %v", c.Safety, 1-budget.DefaultMargin)
			}
			// Within the ratio's 2%, the model aims at 97% of the limit as
			// Azure counts it, never at all of it.
			if aim := c.Margin(p) * scale; aim > 0.99 {
				t.Errorf("the model reserves %.3f of the limit as Azure counts it", aim)
			}
			st := f.sim.Stats().Deployments[0]
			if st.RateLimited.Tokens > 0 {
				t.Errorf("%d tokens 429s", st.RateLimited.Tokens)
			}
			m := f.router.Metrics()
			t.Logf("scale %v: ratio %.4f safety %.3f margin %.3f; %d calls, 429s %+v; ratio/weight by window %s", scale, c.Ratio, c.Safety, c.Margin(p), m.Completed, st.RateLimited, history())
		})
	}
}

// watchRatio samples the learned ratio of deployment "a" once a window
// until the test ends, for a failure to show how it got there.
func watchRatio(t *testing.T, f *fixture, window time.Duration) func() string {
	var mu sync.Mutex
	var seen []string
	tick := time.NewTicker(window)
	done := make(chan struct{})
	t.Cleanup(func() { tick.Stop(); close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				c := f.router.Calibrations()["a"]
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%.4f/%.0f", c.Ratio, c.Weight))
				mu.Unlock()
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(seen, " ")
	}
}

// TestPacingHoldsAgainstSlidingWindows: a server whose request windows
// slide, and which counts each call up to 10 ms after it arrives, draws
// no requests 429 from learned pacing, and the allowance it paces with
// covers the lag it measured. (How fast it goes is bench coldstart's to
// measure, not a unit test's.)
func TestPacingHoldsAgainstSlidingWindows(t *testing.T) {
	const window = 6 * time.Second // 1 s windows of 100 ms
	f := newFixture(t, azuresim.Config{Window: window, Seed: 1, Deployments: []azuresim.Deployment{
		{Name: "a", TPM: 10000000, RPM: 600, Reply: "fixed", OutputTokens: 4,
			RequestWindows: azuresim.SlidingWindow, DispatchDelay: 5 * time.Millisecond, DispatchJitter: 1},
	}}, "window: 6s\n"+strings.Replace(deployments("a:10000000"), "tpm: 10000000", "tpm: 10000000, rpm: 600", 1))
	load(t, f, 16, time.Now().Add(3*time.Second), 16)
	st := f.sim.Stats().Deployments[0]
	if st.RateLimited.Requests > 0 {
		t.Errorf("%d requests 429s against sliding windows (%d accepted)", st.RateLimited.Requests, st.Accepted)
	}
	c := f.router.Calibrations()["a"]
	if c.Lag <= 0 || c.Allowance(learning.Policy{Window: window}) < c.Lag {
		t.Errorf("allowance %v does not cover the measured lag %v", c.Allowance(learning.Policy{Window: window}), c.Lag)
	}
	if st.Accepted == 0 {
		t.Error("no call was admitted")
	}
	t.Logf("%d accepted, lag %v, allowance %v", st.Accepted, c.Lag, c.Allowance(learning.Policy{Window: window}))
}
