package azuresim

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// timed is a reply with the instants around it: the server counted the
// call somewhere between sent and got.
type timed struct {
	reply
	sent, got time.Time
}

func postTimed(t *testing.T, url string, body any) timed {
	t.Helper()
	sent := time.Now()
	r := post(t, url, body)
	return timed{reply: r, sent: sent, got: time.Now()}
}

func (r timed) retryAfter() time.Duration {
	return time.Duration(r.int("retry-after-ms")) * time.Millisecond
}

// straddle serves cfg and sends first just before a boundary of windows of
// length l (where fixed windows would count it) and second just after it
// (where they would count it anew). It starts again on a fresh simulator
// when first cannot finish before the boundary, as on a stalled machine.
func straddle(t *testing.T, l time.Duration, cfg Config, first, second []any) (*Sim, string, []timed, []timed) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		s, url := serve(t, cfg, Options{})
		// The first boundary with four tenths of a length before it.
		soonest := time.Now().Add(4 * l / 10).UnixNano()
		b := time.Unix(0, (soonest/int64(l)+1)*int64(l))
		time.Sleep(time.Until(b.Add(-4 * l / 10)))
		var before, after []timed
		for _, body := range first {
			before = append(before, postTimed(t, chatURL(url, "d"), body))
		}
		if time.Now().After(b.Add(-l / 10)) {
			if attempt == 2 {
				t.Fatalf("three times the calls before the boundary could not finish in time")
			}
			continue
		}
		time.Sleep(time.Until(b.Add(l / 50)))
		for _, body := range second {
			after = append(after, postTimed(t, chatURL(url, "d"), body))
		}
		return s, url, before, after
	}
}

// checkRetryAfter checks that refused says to come back exactly when the
// call admitted as oldest (between its sent and got) is a length l old.
func checkRetryAfter(t *testing.T, refused, oldest timed, l time.Duration) {
	t.Helper()
	// The server refused at q in [sent, got] and said ceil(a+l-q) in ms,
	// for the oldest admission a: so q+wait is in [a+l, a+l+1ms].
	wait := refused.retryAfter()
	if refused.sent.Add(wait).After(oldest.got.Add(l+time.Millisecond)) || refused.got.Add(wait).Before(oldest.sent.Add(l)) {
		t.Errorf("retry-after-ms %d: want the moment the call admitted between %v and %v is %v old (refused between %v and %v)",
			refused.int("retry-after-ms"), oldest.sent.Format(time.StampMicro), oldest.got.Format(time.StampMicro), l,
			refused.sent.Format(time.StampMicro), refused.got.Format(time.StampMicro))
	}
}

func repeat(n int, body any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = body
	}
	return out
}

func TestSlidingRequestWindowsRefuseABurstAcrossABoundary(t *testing.T) {
	t.Parallel() // each waits for a boundary; together they wait once
	for _, rule := range []WindowRule{FixedWindow, SlidingWindow} {
		t.Run(string(rule), func(t *testing.T) {
			t.Parallel()
			// 360 RPM: 6 a second, 60 in ten.
			cfg := Config{Deployments: []Deployment{{Name: "d", TPM: 1_000_000, RPM: 360, RequestWindows: rule}}}
			s, url, before, after := straddle(t, time.Second, cfg, repeat(6, chatBody("hi", 5)), repeat(6, chatBody("hi", 5)))
			for i, r := range before {
				if r.status != 200 {
					t.Fatalf("call %d of the first six: status %d", i, r.status)
				}
			}
			if rule == FixedWindow {
				for i, r := range after {
					if r.status != 200 {
						t.Errorf("fixed: call %d after the boundary: status %d, want a fresh window", i, r.status)
					}
				}
				return
			}
			for i, r := range after {
				if r.status != 429 || r.int("x-ratelimit-remaining-requests") != 0 || !strings.Contains(r.errorField("message").(string), "call rate limit") {
					t.Fatalf("sliding: call %d after the boundary: status %d, remaining requests %d, body %v; want the 1 s window's 429",
						i, r.status, r.int("x-ratelimit-remaining-requests"), r.body)
				}
				checkRetryAfter(t, r, before[0], time.Second)
			}
			last := after[len(after)-1]
			time.Sleep(time.Until(last.got.Add(last.retryAfter() / 2)))
			if r := post(t, chatURL(url, "d"), chatBody("hi", 5)); r.status != 429 {
				t.Errorf("halfway to retry-after: status %d, want still refused", r.status)
			}
			time.Sleep(time.Until(last.got.Add(last.retryAfter())))
			r := post(t, chatURL(url, "d"), chatBody("hi", 5))
			if r.status != 200 {
				t.Fatalf("at retry-after: status %d %v", r.status, r.body)
			}
			// The ten-second window still holds all seven.
			if got := r.int("x-ratelimit-remaining-requests"); got != 60-7 {
				t.Errorf("remaining requests %d, want 53", got)
			}
			st := statsOf(t, s, "d")
			if st.Accepted != 7 || st.RateLimited.Requests != 7 {
				t.Errorf("stats %+v", st)
			}
			checkRefusalLog(t, st, before, after)
		})
	}
}

// checkRefusalLog checks that the log holds every refusal of the burst
// after the boundary, each with the 1 s window's six admissions of the
// burst before it, counted when those calls were in flight.
func checkRefusalLog(t *testing.T, st Stats, before, after []timed) {
	t.Helper()
	if len(st.Refusals) != 7 {
		t.Fatalf("refusal log holds %d, want the 7 refusals", len(st.Refusals))
	}
	for i, r := range st.Refusals[:len(after)] {
		if r.Window != time.Second || r.Limit != 6 || len(r.Held) != 6 || r.At.Before(after[i].sent) || r.At.After(after[i].got) {
			t.Fatalf("refusal %d: %+v, want the 1 s window, limit 6, six held, at between %v and %v", i, r, after[i].sent, after[i].got)
		}
		for j, h := range r.Held {
			if h.Before(before[j].sent) || h.After(before[j].got) {
				t.Errorf("refusal %d held %d counted at %v, want between %v and %v", i, j, h, before[j].sent, before[j].got)
			}
		}
	}
}

func TestSlidingTokenWindowRefusesAcrossABoundary(t *testing.T) {
	t.Parallel() // each waits for a boundary; together they wait once
	cost := func(maxTokens int) int64 { return Estimate([]tokens.Message{{Content: "a"}}, int64(maxTokens), 1, 1) }
	for _, rule := range []WindowRule{FixedWindow, SlidingWindow} {
		t.Run(string(rule), func(t *testing.T) {
			t.Parallel()
			// A one-second token window; the request windows stay fixed
			// and far from binding.
			cfg := Config{Window: time.Second, Deployments: []Deployment{{Name: "d", TPM: 10_000, RPM: 600_000, TokenWindow: rule}}}
			big := chatBody("a", 6000)
			s, url, before, after := straddle(t, time.Second, cfg, []any{big}, []any{big})
			a, b := before[0], after[0]
			if a.status != 200 || a.int("x-ratelimit-remaining-tokens") != 10_000-cost(6000) {
				t.Fatalf("first call: status %d, remaining %d", a.status, a.int("x-ratelimit-remaining-tokens"))
			}
			if rule == FixedWindow {
				if b.status != 200 || b.int("x-ratelimit-remaining-tokens") != 10_000-cost(6000) {
					t.Errorf("fixed, after the boundary: status %d, remaining %d; want a fresh window", b.status, b.int("x-ratelimit-remaining-tokens"))
				}
				return
			}
			// The last second holds the first call: the second does not fit.
			if b.status != 429 || !strings.Contains(b.errorField("message").(string), "token rate limit") {
				t.Fatalf("sliding, after the boundary: status %d %v", b.status, b.body)
			}
			if got := b.int("x-ratelimit-remaining-tokens"); got != 10_000-cost(6000) || b.header.Get("x-ratelimit-reset-tokens") != "1" {
				t.Errorf("on the 429: remaining tokens %d, reset %q; want what the last second leaves, and a second at most to wait", got, b.header.Get("x-ratelimit-reset-tokens"))
			}
			checkRetryAfter(t, b, a, time.Second)
			if r := post(t, chatURL(url, "d"), chatBody("a", 1000)); r.status != 200 || r.int("x-ratelimit-remaining-tokens") != 10_000-cost(6000)-cost(1000) {
				t.Errorf("a call that fits what is left: status %d, remaining %d", r.status, r.int("x-ratelimit-remaining-tokens"))
			}
			time.Sleep(time.Until(b.got.Add(b.retryAfter() / 2)))
			if r := post(t, chatURL(url, "d"), big); r.status != 429 {
				t.Errorf("halfway to retry-after: status %d, want still refused", r.status)
			}
			time.Sleep(time.Until(b.got.Add(b.retryAfter())))
			r := post(t, chatURL(url, "d"), big)
			if want := 10_000 - cost(1000) - cost(6000); r.status != 200 || r.int("x-ratelimit-remaining-tokens") != want {
				t.Fatalf("at retry-after: status %d, remaining %d, want 200 with %d left (the first call aged out)", r.status, r.int("x-ratelimit-remaining-tokens"), want)
			}
			if st := statsOf(t, s, "d"); st.Accepted != 3 || st.RateLimited.Tokens != 2 || st.WindowTokens != cost(1000)+cost(6000) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A pool is one count: its meter slides when its members do.
func TestPooledDeploymentsShareASlidingWindow(t *testing.T) {
	cfg := Config{Pools: []Pool{{Name: "p", TPM: 10_000}}, Deployments: []Deployment{
		{Name: "a", TPM: 10_000, Pool: "p", RequestWindows: SlidingWindow, TokenWindow: SlidingWindow},
		{Name: "b", TPM: 10_000, Pool: "p", RequestWindows: SlidingWindow, TokenWindow: SlidingWindow},
	}}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		d := s.lookup("default", name)
		if !d.pool.tokens.sliding || !d.pool.req1.sliding || !d.pool.req10.sliding {
			t.Errorf("%s: the pool's windows are not sliding", name)
		}
	}
	cfg.Deployments[1].TokenWindow = ""
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "deployments[1].token_window") {
		t.Errorf("members that count the pool otherwise: %v", err)
	}
}

func TestEstimateScaleShowsInHeadersAndStats(t *testing.T) {
	cfg := Config{Refund: Refund, Deployments: []Deployment{
		{Name: "same", TPM: 1_000_000},
		{Name: "over", TPM: 1_000_000, EstimateScale: 1.1},
		{Name: "under", TPM: 1_000_000, EstimateScale: 0.9},
	}}
	s, url := serve(t, cfg, Options{})
	clearOfBoundary(time.Minute)
	estimate := Estimate([]tokens.Message{{Content: "hello world"}}, 1000, 1, 1)
	for name, scale := range map[string]float64{"same": 1, "over": 1.1, "under": 0.9} {
		want := int64(math.Round(float64(estimate) * scale))
		r := post(t, chatURL(url, name), chatBody("hello world", 1000))
		if r.status != 200 {
			t.Fatalf("%s: status %d", name, r.status)
		}
		st := statsOf(t, s, name)
		// The window held the charge until the refund gave the unused
		// part back; the header was read in between.
		if got := 1_000_000 - r.int("x-ratelimit-remaining-tokens"); got != want {
			t.Errorf("%s: charged %d by the header, want %d (%d × %v)", name, got, want, estimate, scale)
		}
		if st.TokensCharged != want || st.TokensEstimated != estimate {
			t.Errorf("%s: stats charged %d, estimated %d; want %d and %d", name, st.TokensCharged, st.TokensEstimated, want, estimate)
		}
		// Under the refund policy the server gives back what it charged
		// and the call did not use: the same scale both ways.
		if used := st.PromptTokens + st.CompletionTokens; st.TokensRefunded != want-used || st.WindowTokens != used {
			t.Errorf("%s: refunded %d with %d used of %d charged; window holds %d", name, st.TokensRefunded, used, want, st.WindowTokens)
		}
	}
}

func TestEstimateNoiseRepeatsForASeed(t *testing.T) {
	estimate := Estimate([]tokens.Message{{Content: "hello world"}}, 10_000, 1, 1)
	charges := func(seed int64) []int64 {
		cfg := Config{Seed: seed, Deployments: []Deployment{{Name: "d", TPM: 10_000_000, RPM: 600_000, EstimateNoise: 0.05}}}
		s, url := serve(t, cfg, Options{})
		clearOfBoundary(time.Minute)
		var out []int64
		var sum int64
		left := int64(10_000_000)
		for range 20 {
			r := post(t, chatURL(url, "d"), chatBody("hello world", 10_000))
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			c := left - r.int("x-ratelimit-remaining-tokens")
			left -= c
			sum += c
			lo, hi := int64(math.Round(float64(estimate)*0.95)), int64(math.Round(float64(estimate)*1.05))
			if c < lo || c > hi {
				t.Errorf("seed %d: charged %d, want within ±5%% of %d", seed, c, estimate)
			}
			out = append(out, c)
		}
		if st := statsOf(t, s, "d"); st.TokensCharged != sum || st.TokensEstimated != 20*estimate {
			t.Errorf("seed %d: stats charged %d, estimated %d; the headers say %d of %d", seed, st.TokensCharged, st.TokensEstimated, sum, 20*estimate)
		}
		return out
	}
	a, again, other := charges(7), charges(7), charges(8)
	if !slices.Equal(a, again) {
		t.Errorf("one seed, two runs:\n%v\n%v", a, again)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 drew the same charges %v", a)
	}
	if slices.Min(a) == slices.Max(a) {
		t.Errorf("no spread in %v", a)
	}
}

// waitFor polls the simulator's stats until ok holds and returns when that
// was first seen.
func waitFor(t *testing.T, s *Sim, ok func(Stats) bool) time.Time {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		if ok(statsOf(t, s, "d")) {
			return time.Now()
		}
	}
	t.Fatal("the simulator never counted the call")
	return time.Time{}
}

func TestDispatchDelayLagsTheCount(t *testing.T) {
	const delay, jitter = 60 * time.Millisecond, 0.5
	least := time.Duration(float64(delay) * (1 - jitter))
	cfg := Config{Seed: 3, Deployments: []Deployment{{Name: "d", TPM: 10_000, RPM: 6000, DispatchDelay: delay, DispatchJitter: jitter}}}
	s, url := serve(t, cfg, Options{})

	// Admitted or refused, a call is counted no sooner than the delay
	// after it was sent, and answered after that.
	for i, c := range []struct {
		body    any
		status  int
		counted func(Stats) bool
	}{
		{chatBody("x", 10), 200, func(st Stats) bool { return st.Accepted == 1 }},
		{chatBody("x", 20), 200, func(st Stats) bool { return st.Accepted == 2 }},
		{chatBody("x", 20_000), 429, func(st Stats) bool { return st.RateLimited.Tokens == 1 }},
	} {
		done := make(chan timed, 1)
		go func() { done <- postTimed(t, chatURL(url, "d"), c.body) }()
		seen := waitFor(t, s, c.counted)
		r := <-done
		if r.status != c.status {
			t.Fatalf("call %d: status %d, want %d", i, r.status, c.status)
		}
		if lag := seen.Sub(r.sent); lag < least {
			t.Errorf("call %d: counted %v after it was sent, want at least %v", i, lag, least)
		}
		if took := r.got.Sub(r.sent); took < least {
			t.Errorf("call %d: answered in %v, before the delay", i, took)
		}
	}

	// A client that gives up during the delay is never counted.
	ctx, cancel := context.WithTimeout(context.Background(), least/4)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, chatURL(url, "d"), strings.NewReader(`{"messages":[{"role":"user","content":"x"}],"max_tokens":1}`))
	req.Header.Set("api-key", "k")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("status %d before the delay was out", resp.StatusCode)
	}
	time.Sleep(2 * delay)
	if st := statsOf(t, s, "d"); st.Accepted != 2 || st.RateLimited.Total() != 1 {
		t.Errorf("a call cancelled during the delay was counted: %+v", st)
	}
}
