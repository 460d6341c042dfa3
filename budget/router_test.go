package budget_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/redistest"
)

var bg = context.Background()

// config builds a validated config of deployments "name:tpm" on one
// resource each.
func config(t *testing.T, extra string, deps ...string) *budget.Config {
	t.Helper()
	var b strings.Builder
	b.WriteString(extra)
	b.WriteString("deployments:\n")
	for _, d := range deps {
		p := strings.Split(d, ":")
		fmt.Fprintf(&b, "  - {name: %s, endpoint: 'https://%s.openai.azure.com', model: gpt-4o, tpm: %s, auth: {api_key_env: K}}\n", p[0], p[0], p[1])
	}
	cfg, _, err := parseConfig("headroom.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func router(t *testing.T, store *budget.Store, cfg *budget.Config) *budget.Router {
	t.Helper()
	r, err := budget.NewRouter(store, cfg, budget.RouterOptions{Rand: rand.New(rand.NewPCG(1, 2)), RequestJitter: -1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func memStore() *budget.Store { return budget.NewMemStore(budget.MemOptions{}) }

func acquire(t *testing.T, r *budget.Router, c budget.Call) *budget.Lease {
	t.Helper()
	l, err := r.Acquire(bg, c)
	if err != nil {
		t.Fatalf("Acquire(%+v): %v", c, err)
	}
	return l
}

func TestRoutesByFractionNotAbsoluteUse(t *testing.T) {
	// small has the fewest tokens used (6,000 against big's 30,000) but
	// the least of its allowance left: 29% of 8,500 against big's 65% of
	// 85,000. tiny has the most tokens left after big but 6% of its
	// allowance: never among the best two, so never the first choice.
	placed := map[string]int{}
	for i := range 30 {
		store := memStore()
		store.Absorb(bg, "big", 30000, 0)
		store.Absorb(bg, "small", 6000, 0)
		store.Absorb(bg, "tiny", 80000, 0)
		r, err := budget.NewRouter(store, config(t, "", "big:100000", "small:10000", "tiny:100000"),
			budget.RouterOptions{Rand: rand.New(rand.NewPCG(uint64(i), 7))})
		if err != nil {
			t.Fatal(err)
		}
		l := acquire(t, r, budget.Call{Tokens: 10})
		placed[l.Deployment.Name]++
	}
	if placed["tiny"] != 0 || placed["big"] == 0 || placed["small"] == 0 {
		t.Errorf("first choices %v: want big and small (the best two by fraction), never tiny", placed)
	}
}

func TestBestTwoSpreadLoad(t *testing.T) {
	store := memStore()
	cfg := config(t, "", "a:1000000", "b:1000000", "c:1000000")
	r := router(t, store, cfg)
	got := map[string]int{}
	for range 300 {
		l := acquire(t, r, budget.Call{Tokens: 100})
		got[l.Deployment.Name]++
		l.Done(bg, budget.Outcome{Sent: true, Status: 200, UsedTokens: 100})
	}
	for _, n := range []string{"a", "b", "c"} {
		if got[n] < 50 {
			t.Errorf("placements %v: %s starved", got, n)
		}
	}
}

func TestBackgroundLeavesTheFloorToInteractive(t *testing.T) {
	store := memStore()
	// 10,000 × 0.85 = 8,500 for interactive; background stops at 90% of
	// that (the default floor keeps 10% back): 7,650.
	r := router(t, store, config(t, "", "a:10000"))
	acquire(t, r, budget.Call{Tokens: 7000, Class: budget.Background})
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if _, err := r.Acquire(ctx, budget.Call{Tokens: 1000, Class: budget.Background}); !errors.Is(err, budget.ErrShed) {
		t.Fatalf("background into the floor: %v, want shed", err)
	}
	acquire(t, r, budget.Call{Tokens: 1000, Class: budget.Interactive})
	if m := r.Metrics(); m.Shed != 1 {
		t.Errorf("shed counted %d times", m.Shed)
	}
}

func TestInteractiveDoesNotQueueBehindBackground(t *testing.T) {
	r := router(t, memStore(), config(t, "", "a:1000000"))
	// Background may hold 850,000 × 0.9 = 765,000.
	acquire(t, r, budget.Call{Tokens: 760000, Class: budget.Background})
	// A background call waits at the head of its queue for the next
	// window …
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	go r.Acquire(ctx, budget.Call{Tokens: 10000, Class: budget.Background})
	time.Sleep(50 * time.Millisecond)
	// … while an interactive call takes the floor at once.
	start := time.Now()
	if _, err := r.Acquire(bg, budget.Call{Tokens: 10000, Class: budget.Interactive}); err != nil {
		t.Fatal(err)
	}
	// Behind the background call it would wait for the next window, a minute.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("interactive waited %v behind a background call", took)
	}
}

func TestWaitsForRoomWithinTheDeadline(t *testing.T) {
	store := budget.NewMemStore(budget.MemOptions{Window: 300 * time.Millisecond})
	r := router(t, store, config(t, "window: 300ms\n", "a:1000"))
	acquire(t, r, budget.Call{Tokens: 800})
	start := time.Now()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	l, err := r.Acquire(ctx, budget.Call{Tokens: 800})
	if err != nil {
		t.Fatalf("room frees within the deadline: %v", err)
	}
	// Room frees after 300 ms; waiting out the deadline would take 10 s.
	if time.Since(start) > 5*time.Second || l.Reservation.Window == 0 {
		t.Errorf("waited %v", time.Since(start))
	}
	if m := r.Metrics(); m.Waits == 0 {
		t.Errorf("no wait counted")
	}
}

func TestTooLargeForAnyDeployment(t *testing.T) {
	r := router(t, memStore(), config(t, "", "a:1000", "b:2000"))
	if _, err := r.Acquire(bg, budget.Call{Tokens: 5000}); !errors.Is(err, budget.ErrTooLarge) {
		t.Fatalf("a call over every cap: %v", err)
	}
}

func TestAffinityPrefersTheSessionsLastDeployment(t *testing.T) {
	store := memStore()
	r := router(t, store, config(t, "", "a:1000000", "b:1000000", "c:1000000"))
	first := acquire(t, r, budget.Call{Tokens: 100, Session: "agent-7"})
	first.Done(bg, budget.Outcome{Sent: true, Status: 200, UsedTokens: 100})
	for range 20 {
		l := acquire(t, r, budget.Call{Tokens: 100, Session: "agent-7"})
		if l.Deployment.Name != first.Deployment.Name {
			t.Fatalf("session moved from %s to %s with headroom left", first.Deployment.Name, l.Deployment.Name)
		}
		l.Done(bg, budget.Outcome{Sent: true, Status: 200, UsedTokens: 100})
	}
}

func TestAffinityGivesWayWhenHeadroomIsLow(t *testing.T) {
	store := memStore()
	cfg := config(t, "affinity_threshold: 0.5\n", "a:10000", "b:10000")
	r := router(t, store, cfg)
	first := acquire(t, r, budget.Call{Tokens: 100, Session: "s"})
	first.Done(bg, budget.Outcome{Sent: true, Status: 200})
	// Fill the session's deployment to 70%.
	store.Absorb(bg, first.Deployment.QuotaKey, 5900, 0)
	if l := acquire(t, r, budget.Call{Tokens: 100, Session: "s"}); l.Deployment.Name == first.Deployment.Name {
		t.Errorf("stayed on %s below the affinity threshold", l.Deployment.Name)
	}
}

func TestPinnedToTheResourceThatMintedTheItems(t *testing.T) {
	r := router(t, memStore(), config(t, "", "east:100000", "west:100000"))
	for range 10 {
		l := acquire(t, r, budget.Call{Tokens: 10, Resource: "https://west.openai.azure.com"})
		if l.Deployment.Name != "west" {
			t.Fatalf("pinned to west, placed on %s", l.Deployment.Name)
		}
		l.Done(bg, budget.Outcome{})
	}
	_, err := r.Acquire(bg, budget.Call{Tokens: 10, Resource: "https://north.openai.azure.com"})
	if !errors.Is(err, budget.ErrPinned) || !strings.Contains(err.Error(), "north") {
		t.Fatalf("pinned to a resource not in the pool: %v", err)
	}
}

func TestRetryPolicyByStatus(t *testing.T) {
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 408: true, 429: true, 500: true, 503: true} {
		if got := (budget.Outcome{Sent: true, Status: status}).Retryable(); got != want {
			t.Errorf("status %d retryable = %v", status, got)
		}
	}
	if !(budget.Outcome{Sent: true, Err: errors.New("connection reset")}).Retryable() {
		t.Error("a connection error is not retryable")
	}
	if (budget.Outcome{Sent: true, Err: context.Canceled}).Retryable() {
		t.Error("the caller's own cancel is retryable")
	}
}

func TestDoMovesOnA429AndNeverRetriesA400(t *testing.T) {
	r := router(t, memStore(), config(t, "", "a:100000", "b:100000"))
	var seen []string
	o, l, err := r.Do(bg, budget.Call{Tokens: 100}, func(_ context.Context, l *budget.Lease) budget.Outcome {
		seen = append(seen, l.Deployment.Name)
		if len(seen) == 1 {
			h := http.Header{"Retry-After-Ms": {"2000"}, "X-Ratelimit-Remaining-Tokens": {"0"}}
			return budget.Outcome{Sent: true, Status: 429, Header: h}
		}
		return budget.Outcome{Sent: true, Status: 200, UsedTokens: 80}
	})
	if err != nil || !o.OK() || len(seen) != 2 || seen[0] == seen[1] || l.Deployment.Name != seen[1] {
		t.Fatalf("429 then 200: %v, tried %v", err, seen)
	}
	if m := r.Metrics(); m.RateLimited[budget.CauseTokens] != 1 || m.Retries != 1 {
		t.Errorf("metrics %+v", m)
	}
	seen = nil
	_, _, err = r.Do(bg, budget.Call{Tokens: 100}, func(_ context.Context, l *budget.Lease) budget.Outcome {
		seen = append(seen, l.Deployment.Name)
		return budget.Outcome{Sent: true, Status: 400}
	})
	var ce *budget.CallError
	if !errors.As(err, &ce) || ce.Status != 400 || len(seen) != 1 {
		t.Fatalf("a 400: %v after %v", err, seen)
	}
}

func TestServerErrorsTripTheBreakerAndAProbeClosesIt(t *testing.T) {
	store := memStore()
	r, err := budget.NewRouter(store, config(t, "", "a:100000", "b:100000"), budget.RouterOptions{ExtraWaits: new(0), RequestJitter: -1})
	if err != nil {
		t.Fatal(err)
	}
	onA := budget.Call{Tokens: 10, Resource: "https://a.openai.azure.com"}
	for range 3 {
		_, _, _ = r.Do(bg, onA, func(context.Context, *budget.Lease) budget.Outcome {
			return budget.Outcome{Sent: true, Status: 503}
		})
	}
	if m := r.Metrics(); m.BreakerTrips != 1 || m.ServerErrors != 3 {
		t.Fatalf("three 503s: %+v", m)
	}
	us, _ := store.Usage(bg, "a")
	if us[0].OpenUntil.IsZero() {
		t.Fatal("the trip was not published to the store")
	}
	for range 5 {
		l := acquire(t, r, budget.Call{Tokens: 10})
		if l.Deployment.Name != "b" {
			t.Fatalf("placed on %s while a's breaker is open", l.Deployment.Name)
		}
		l.Done(bg, budget.Outcome{})
	}
	// After the backoff one probe goes through; its success closes the
	// breaker.
	time.Sleep(time.Until(us[0].OpenUntil) + 10*time.Millisecond)
	probe := acquire(t, r, onA)
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	if _, err := r.Acquire(ctx, onA); err == nil {
		t.Fatal("a second call went through while the probe was out")
	}
	probe.Done(bg, budget.Outcome{Sent: true, Status: 200})
	acquire(t, r, onA).Done(bg, budget.Outcome{Sent: true, Status: 200})
}

// Two routers on one Redis are two processes of a fleet.
func TestFleetSharesEffectiveLimitAndBreaker(t *testing.T) {
	url := redistest.URL(t)
	open := func() *budget.Store {
		rdb, err := redisstore.Dial(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(bg, redisstore.Options{Client: rdb, Prefix: "router-test:" + t.Name()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	p1 := router(t, open(), config(t, "", "a:100000", "b:100000"))
	p2 := router(t, open(), config(t, "", "a:100000", "b:100000"))

	// p1 learns from a's headers that its limit is now 10,000.
	l := acquire(t, p1, budget.Call{Tokens: 10, Resource: "https://a.openai.azure.com"})
	l.Done(bg, budget.Outcome{Sent: true, Status: 200, Header: http.Header{"X-Ratelimit-Limit-Tokens": {"10000"}}})
	// p2 cannot place 9,000 on a any more (10,000 × 0.85 = 8,500).
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	if _, err := p2.Acquire(ctx, budget.Call{Tokens: 9000, Resource: "https://a.openai.azure.com"}); !errors.Is(err, budget.ErrTooLarge) && !errors.Is(err, budget.ErrShed) {
		t.Fatalf("p2 placed 9,000 on a after p1 saw its limit drop: %v", err)
	}
	// p1 gets a 429 from b; p2 stops sending to b.
	l = acquire(t, p1, budget.Call{Tokens: 10, Resource: "https://b.openai.azure.com"})
	l.Done(bg, budget.Outcome{Sent: true, Status: 429, Header: http.Header{"Retry-After-Ms": {"3000"}}})
	for range 5 {
		l := acquire(t, p2, budget.Call{Tokens: 10})
		if l.Deployment.Name == "b" {
			t.Fatal("p2 placed a call on b while p1's 429 breaker is open")
		}
		l.Done(bg, budget.Outcome{})
	}
}

func TestParseFeedbackIsDefensive(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want budget.Feedback
	}{
		{http.Header{}, budget.Feedback{LimitTokens: -1, RemainingTokens: -1, LimitRequests: -1, RemainingRequests: -1}},
		{http.Header{"X-Ratelimit-Limit-Tokens": {"-1"}, "X-Ratelimit-Remaining-Tokens": {"abc"}, "Retry-After": {"0"}},
			budget.Feedback{LimitTokens: -1, RemainingTokens: -1, LimitRequests: -1, RemainingRequests: -1}},
		{http.Header{"X-Rate-Limit-Remaining-Tokens": {" 120 "}, "X-Ratelimit-Limit-Requests": {"60"}, "X-Ratelimit-Remaining-Requests": {"0"}, "Retry-After-Ms": {"1500"}},
			budget.Feedback{LimitTokens: -1, RemainingTokens: 120, LimitRequests: 60, RemainingRequests: 0, RetryAfter: 1500 * time.Millisecond}},
		{http.Header{"Retry-After": {"7"}}, budget.Feedback{LimitTokens: -1, RemainingTokens: -1, LimitRequests: -1, RemainingRequests: -1, RetryAfter: 7 * time.Second}},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}},
			budget.Feedback{LimitTokens: -1, RemainingTokens: -1, LimitRequests: -1, RemainingRequests: -1, RetryAfter: 3 * time.Second}},
		{http.Header{"X-Ms-Retry-After-Ms": {"250"}}, budget.Feedback{LimitTokens: -1, RemainingTokens: -1, LimitRequests: -1, RemainingRequests: -1, RetryAfter: 250 * time.Millisecond}},
	}
	for _, c := range cases {
		if got := budget.ParseFeedback(c.h, now); got != c.want {
			t.Errorf("ParseFeedback(%v) = %+v, want %+v", c.h, got, c.want)
		}
	}
}

func TestClassify429(t *testing.T) {
	for _, c := range []struct {
		fb   budget.Feedback
		want budget.Cause
	}{
		{budget.Feedback{LimitTokens: 30000, RemainingTokens: 5000, RemainingRequests: 10}, budget.CauseAdjustment},
		{budget.Feedback{LimitTokens: 60000, RemainingTokens: 0, RemainingRequests: 10}, budget.CauseTokens},
		{budget.Feedback{LimitTokens: 60000, RemainingTokens: 300, RemainingRequests: 10}, budget.CauseTokens}, // less than the call needs
		{budget.Feedback{LimitTokens: 60000, RemainingTokens: 50000, RemainingRequests: 0}, budget.CauseRequests},
		{budget.Feedback{LimitTokens: -1, RemainingTokens: -1, RemainingRequests: -1}, budget.CauseUnknown},
	} {
		if got := budget.Classify(c.fb, 60000, 1000); got != c.want {
			t.Errorf("Classify(%+v) = %s, want %s", c.fb, got, c.want)
		}
	}
}

func FuzzParseFeedback(f *testing.F) {
	f.Add("60000", "-1", "1500", "Tue, 01 Dec 2026 08:00:00 GMT")
	f.Add("", "abc", "1e400", "NaN")
	f.Fuzz(func(t *testing.T, limit, remaining, ms, after string) {
		h := http.Header{"X-Ratelimit-Limit-Tokens": {limit}, "X-Ratelimit-Remaining-Tokens": {remaining}, "Retry-After-Ms": {ms}, "Retry-After": {after}}
		fb := budget.ParseFeedback(h, time.Now())
		if fb.LimitTokens < -1 || fb.RemainingTokens < -1 || fb.RetryAfter < 0 {
			t.Fatalf("ParseFeedback(%v) = %+v", h, fb)
		}
	})
}
