// Package storetest is the conformance suite every budget.Driver must pass.
// A driver's test calls RunConformanceTests with a Harness that makes its
// drivers; the suite runs each through budget.Store, as callers use it.
//
// The suite runs against real time (a Redis store takes its clock from the
// server), so it waits for window boundaries; windows are compressed to keep
// that short.
package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// Harness makes drivers for the suite.
type Harness interface {
	// MakeDriver returns a driver with the given window and policy and a
	// namespace of its own, closed when the test ends.
	MakeDriver(t *testing.T, window time.Duration, policy budget.Policy) budget.Driver
	// Reopen returns another driver on the state d holds, as a second
	// process would have.
	Reopen(t *testing.T, d budget.Driver) budget.Driver
	// Footprint counts what the driver keeps for deployment.
	Footprint(t *testing.T, d budget.Driver, deployment string) int
}

// store is a Store under test and the driver beneath it.
type store struct {
	*budget.Store
	d budget.Driver
}

func makeStore(t *testing.T, h Harness, window time.Duration, policy budget.Policy) store {
	d := h.MakeDriver(t, window, policy)
	return store{budget.NewStore(d), d}
}

func reopen(t *testing.T, h Harness, s store) store {
	d := h.Reopen(t, s.d)
	return store{budget.NewStore(d), d}
}

// RunConformanceTests runs the suite; its subtests run in parallel.
func RunConformanceTests(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"TokensAtAndPastTheCap", testTokens},
		{"OneSecondWindow", testOneSecond},
		{"TenSecondWindow", testTenSeconds},
		{"WindowRollOver", testRollOver},
		{"HoldKeepsTheCharge", testHold},
		{"RefundGivesBackTheUnused", testRefund},
		{"SettleGoesToTheReservedWindow", testSettleAcrossBoundary},
		{"Cancel", testCancel},
		{"IdempotentByID", testIdempotent},
		{"KeysExpireWithinTwoWindows", testExpiry},
		{"EffectiveLimitIsShared", testEffectiveLimit},
		{"BreakerIsShared", testBreaker},
		{"UsageOfManyDeployments", testUsage},
		{"BadArguments", testBadArguments},
		{"ConcurrentReservationsNeverOverspend", testConcurrent},
		{"SpacingBetweenAdmissions", testSpacing},
		{"AbsorbAddsUnseenUse", testAbsorb},
		{"CensusCountsAgentsAnd429s", testCensus},
		{"CensusAddsTallies", testTally},
		{"ReservationsSayWhatIsHeld", testHeld},
		{"CalibrationIsSharedAndAtomic", testCalibration},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

var bg = context.Background()

// untilBoundary sleeps until just after the next multiple of d.
func untilBoundary(d time.Duration) {
	now := time.Now().UnixNano()
	next := (now/int64(d) + 1) * int64(d)
	time.Sleep(time.Duration(next-now) + 3*time.Millisecond)
}

// clearOf waits out the current window of length d when less than need is
// left of it.
func clearOf(d, need time.Duration) {
	now := time.Now().UnixNano()
	if left := time.Duration((now/int64(d)+1)*int64(d) - now); left < need {
		time.Sleep(left + 3*time.Millisecond)
	}
}

func reserve(t *testing.T, s store, dep string, tokens int64, lim budget.Limits) budget.Reservation {
	t.Helper()
	r, err := s.Reserve(bg, "", dep, budget.Cost{Tokens: tokens}, lim)
	if err != nil {
		t.Fatalf("Reserve(%d tokens) = %v, want admitted", tokens, err)
	}
	if r.Tokens != tokens || r.Requests != 1 || r.ID == "" || r.Deployment != dep {
		t.Fatalf("reservation %+v", r)
	}
	return r
}

func refused(t *testing.T, s store, dep string, tokens int64, lim budget.Limits, want budget.Limit) *budget.Refusal {
	t.Helper()
	_, err := s.Reserve(bg, "", dep, budget.Cost{Tokens: tokens}, lim)
	var ref *budget.Refusal
	if !errors.As(err, &ref) || ref.Limit != want {
		t.Fatalf("Reserve(%d tokens) = %v, want a %s refusal", tokens, err, want)
	}
	if ref.Deployment != dep || ref.Wait <= 0 {
		t.Fatalf("refusal %+v", ref)
	}
	return ref
}

// usage reads a deployment's state after flushing what s settled.
func usage(t *testing.T, s store, dep string) budget.Usage {
	t.Helper()
	if err := s.Flush(bg); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	u, err := s.Usage(bg, dep)
	if err != nil || len(u) != 1 {
		t.Fatalf("Usage(%s) = %v, %v", dep, u, err)
	}
	return u[0]
}

// wide has request limits that never bind: 60,000 a minute.
func wide(tokens int64, margin float64) budget.Limits {
	return budget.Limits{Tokens: tokens, Requests: 60000, Margin: margin}
}

func testTokens(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	lim := wide(1000, 0.5) // a cap of 500
	clearOf(time.Minute, 5*time.Second)
	reserve(t, s, "d", 300, lim)
	reserve(t, s, "d", 200, lim) // exactly the cap
	ref := refused(t, s, "d", 1, lim, budget.LimitTokens)
	if ref.Wait > time.Minute || ref.TooLarge {
		t.Errorf("one past the cap: %+v", ref)
	}
	ref = refused(t, s, "other", 501, lim, budget.LimitTokens)
	if !ref.TooLarge {
		t.Errorf("more than a whole window's cap is not marked too large: %+v", ref)
	}
	if u := usage(t, s, "d"); u.Reserved != 500 || u.Requests10s != 2 {
		t.Errorf("usage %+v", u)
	}
	// The default margin applies when none is given.
	reserve(t, s, "m", 850, budget.Limits{Tokens: 1000, Requests: 60000})
	refused(t, s, "m", 1, budget.Limits{Tokens: 1000, Requests: 60000}, budget.LimitTokens)
}

func testOneSecond(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	lim := budget.Limits{Tokens: 1 << 30, Requests: 120} // 2 a second, 20 in ten
	untilBoundary(time.Second)
	reserve(t, s, "d", 1, lim)
	reserve(t, s, "d", 1, lim)
	ref := refused(t, s, "d", 1, lim, budget.LimitRequests1s)
	if ref.Wait > time.Second {
		t.Errorf("the 1 s window frees within a second: %+v", ref)
	}
	u := usage(t, s, "d")
	if u.Requests1s != 2 || u.Requests10s != 2 {
		t.Errorf("usage %+v", u)
	}
}

func testTenSeconds(t *testing.T, h Harness) {
	// A 6 s window makes the request windows 100 ms and 1 s. 6 a window:
	// one per 100 ms, but also only one per second.
	s := makeStore(t, h, 6*time.Second, budget.Hold)
	lim := budget.Limits{Tokens: 1 << 30, Requests: 6}
	untilBoundary(time.Second)
	reserve(t, s, "d", 1, lim)
	untilBoundary(100 * time.Millisecond)
	ref := refused(t, s, "d", 1, lim, budget.LimitRequests10s)
	if ref.Wait <= 100*time.Millisecond || ref.Wait > time.Second {
		t.Errorf("the scaled 10 s window frees at its end: %+v", ref)
	}
}

func testRollOver(t *testing.T, h Harness) {
	w := 600 * time.Millisecond
	s := makeStore(t, h, w, budget.Hold)
	lim := wide(100, 1)
	clearOf(w, 150*time.Millisecond)
	first := reserve(t, s, "d", 100, lim)
	ref := refused(t, s, "d", 10, lim, budget.LimitTokens)
	time.Sleep(ref.Wait + 3*time.Millisecond)
	next := reserve(t, s, "d", 100, lim)
	if next.Window != first.Window+1 {
		t.Errorf("after waiting the refusal's wait: window %d, want %d", next.Window, first.Window+1)
	}
}

func testHold(t *testing.T, h Harness) {
	w := 3 * time.Second
	s := makeStore(t, h, w, budget.Hold)
	clearOf(w, time.Second)
	r := reserve(t, s, "d", 80, wide(100, 1))
	if err := s.Settle(bg, r, 10); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, "d"); u.Reserved != 80 || u.Settled != 80 || u.Used != 10 {
		t.Errorf("hold: %+v, want 80 reserved, 80 settled, 10 used", u)
	}
	refused(t, s, "d", 21, wide(100, 1), budget.LimitTokens)
}

func testRefund(t *testing.T, h Harness) {
	w := 3 * time.Second
	s := makeStore(t, h, w, budget.Refund)
	clearOf(w, time.Second)
	r := reserve(t, s, "d", 80, wide(100, 1))
	if err := s.Settle(bg, r, 10); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, "d"); u.Reserved != 10 || u.Settled != 80 || u.Used != 10 {
		t.Errorf("refund: %+v, want 10 reserved, 80 settled, 10 used", u)
	}
	reserve(t, s, "d", 90, wide(100, 1))
	// Using more than reserved takes nothing more: the charge was the estimate.
	r2 := reserve(t, s, "e", 50, wide(100, 1))
	if err := s.Settle(bg, r2, 70); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, "e"); u.Reserved != 50 || u.Used != 70 {
		t.Errorf("settling above the estimate: %+v", u)
	}
}

func testSettleAcrossBoundary(t *testing.T, h Harness) {
	w := 600 * time.Millisecond
	s := makeStore(t, h, w, budget.Refund)
	lim := wide(100, 1)
	clearOf(w, 200*time.Millisecond)
	old := reserve(t, s, "d", 80, lim)
	untilBoundary(w)
	cur := reserve(t, s, "d", 50, lim)
	if cur.Window != old.Window+1 {
		t.Fatalf("windows %d then %d", old.Window, cur.Window)
	}
	if err := s.Settle(bg, old, 10); err != nil {
		t.Fatal(err)
	}
	// The refund went to the old window: the current one is untouched.
	if u := usage(t, s, "d"); u.Reserved != 50 || u.Settled != 0 || u.Used != 0 {
		t.Errorf("current window after settling an old reservation: %+v", u)
	}
	if err := s.Cancel(bg, cur); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, "d"); u.Reserved != 0 {
		t.Errorf("after cancel: %+v", u)
	}
}

func testCancel(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	clearOf(10*time.Second, 500*time.Millisecond) // the 10 s window holds still
	lim := budget.Limits{Tokens: 100, Requests: 60000, Margin: 1}
	keep := reserve(t, s, "d", 20, lim)
	r := reserve(t, s, "d", 80, lim)
	if err := s.Cancel(bg, r); err != nil {
		t.Fatal(err)
	}
	u := usage(t, s, "d")
	if u.Reserved != 20 || u.Requests10s != 1 {
		t.Errorf("after cancel: %+v, want 20 tokens and 1 request", u)
	}
	// A second cancel, or a settle after it, changes nothing.
	if err := s.Cancel(bg, r); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(bg, r, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(bg, keep, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(bg, keep); err != nil { // cancel after settle: nothing
		t.Fatal(err)
	}
	if u := usage(t, s, "d"); u.Reserved != 20 || u.Used != 5 || u.Settled != 20 {
		t.Errorf("after repeated settle and cancel: %+v", u)
	}
}

func testIdempotent(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	clearOf(10*time.Second, 500*time.Millisecond) // the 10 s window holds still
	lim := wide(100, 1)
	id := budget.NewID()
	a, err := s.Reserve(bg, id, "d", budget.Cost{Tokens: 60}, lim)
	if err != nil {
		t.Fatal(err)
	}
	// A resend, as a client re-sends a command after a read timeout.
	b, err := s.Reserve(bg, id, "d", budget.Cost{Tokens: 60}, lim)
	if err != nil {
		t.Fatalf("resend refused: %v", err)
	}
	if a.ID != b.ID || a.Window != b.Window || a.Tokens != b.Tokens {
		t.Errorf("resend returned %+v, first %+v", b, a)
	}
	u := usage(t, s, "d")
	if u.Reserved != 60 || u.Requests10s != 1 {
		t.Errorf("after a resend: %+v, want one charge", u)
	}
	for range 2 {
		if err := s.Settle(bg, a, 7); err != nil {
			t.Fatal(err)
		}
	}
	if u := usage(t, s, "d"); u.Used != 7 || u.Settled != 60 {
		t.Errorf("settled twice: %+v", u)
	}
	// Another handle (another process) sees the same reservation.
	other := reopen(t, h, s)
	c, err := other.Reserve(bg, id, "d", budget.Cost{Tokens: 60}, lim)
	if err != nil || c.Window != a.Window {
		t.Errorf("resend through another handle: %+v, %v", c, err)
	}
}

func testExpiry(t *testing.T, h Harness) {
	w := 300 * time.Millisecond
	s := makeStore(t, h, w, budget.Hold)
	lim := wide(1000, 1)
	settled := reserve(t, s, "d", 10, lim)
	if err := s.Settle(bg, settled, 5); err != nil {
		t.Fatal(err)
	}
	reserve(t, s, "d", 10, lim) // never settled: its process died
	if n := h.Footprint(t, s.d, "d"); n == 0 {
		t.Fatal("nothing stored for a deployment with reservations")
	}
	time.Sleep(2*w + 50*time.Millisecond)
	if n := h.Footprint(t, s.d, "d"); n != 0 {
		t.Errorf("%d entries left two windows later", n)
	}
	if u := usage(t, s, "d"); u.Reserved != 0 {
		t.Errorf("usage after expiry: %+v", u)
	}
}

func testEffectiveLimit(t *testing.T, h Harness) {
	w := 3 * time.Second
	a := makeStore(t, h, w, budget.Hold)
	b := reopen(t, h, a)
	lim := wide(1000, 1)
	clearOf(w, time.Second)
	if err := a.SetEffectiveLimit(bg, "d", 500, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, b, "d"); u.EffectiveLimit != 500 {
		t.Errorf("the other process sees effective limit %d", u.EffectiveLimit)
	}
	refused(t, b, "d", 600, lim, budget.LimitTokens)
	reserve(t, b, "d", 500, lim)
	// A limit above the configured one does not raise it.
	if err := a.SetEffectiveLimit(bg, "e", 5000, time.Second); err != nil {
		t.Fatal(err)
	}
	refused(t, b, "e", 1001, lim, budget.LimitTokens)
	time.Sleep(450 * time.Millisecond)
	clearOf(w, time.Second)
	if u := usage(t, b, "d"); u.EffectiveLimit != 0 {
		t.Errorf("effective limit %d after its ttl", u.EffectiveLimit)
	}
}

func testBreaker(t *testing.T, h Harness) {
	a := makeStore(t, h, time.Minute, budget.Hold)
	b := reopen(t, h, a)
	lim := wide(1000, 1)
	until, err := a.OpenBreaker(bg, "d", 400*time.Millisecond)
	if err != nil || until.IsZero() {
		t.Fatalf("OpenBreaker = %v, %v", until, err)
	}
	// A shorter opening does not close it earlier.
	if u2, err := b.OpenBreaker(bg, "d", 10*time.Millisecond); err != nil || u2.Before(until) {
		t.Errorf("a shorter opening moved open-until from %v to %v (%v)", until, u2, err)
	}
	ref := refused(t, b, "d", 1, lim, budget.LimitBreaker)
	if ref.Wait > 400*time.Millisecond {
		t.Errorf("breaker wait %v", ref.Wait)
	}
	if u := usage(t, b, "d"); !u.OpenUntil.Equal(until) {
		t.Errorf("open-until seen by the other process: %v, want %v", u.OpenUntil, until)
	}
	time.Sleep(ref.Wait + 5*time.Millisecond)
	reserve(t, b, "d", 1, lim)
	if u := usage(t, a, "d"); !u.OpenUntil.IsZero() {
		t.Errorf("open-until after closing: %v", u.OpenUntil)
	}
}

func testUsage(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	clearOf(10*time.Second, 500*time.Millisecond) // the 10 s window holds still
	lim := wide(1000, 1)
	reserve(t, s, "a", 100, lim)
	reserve(t, s, "b", 200, lim)
	reserve(t, s, "b", 300, lim)
	us, err := s.Usage(bg, "a", "b", "never-used")
	if err != nil || len(us) != 3 {
		t.Fatalf("Usage = %v, %v", us, err)
	}
	if us[0].Deployment != "a" || us[0].Reserved != 100 || us[1].Reserved != 500 || us[1].Requests10s != 2 || us[2].Reserved != 0 {
		t.Errorf("usage %+v", us)
	}
	if us[0].Now.IsZero() || us[0].Window != us[1].Window || us[2].Window != us[0].Window {
		t.Errorf("one instant, one window: %+v", us)
	}
}

func testBadArguments(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	for _, c := range []struct {
		dep  string
		cost budget.Cost
		lim  budget.Limits
	}{
		{"", budget.Cost{Tokens: 1}, wide(10, 1)},
		{"d", budget.Cost{Tokens: -1}, wide(10, 1)},
		{"d", budget.Cost{Tokens: 1}, budget.Limits{Requests: 10}},
		{"d", budget.Cost{Tokens: 1}, budget.Limits{Tokens: 10}},
	} {
		_, err := s.Reserve(bg, "", c.dep, c.cost, c.lim)
		var ref *budget.Refusal
		if err == nil || errors.As(err, &ref) || errors.Is(err, budget.ErrUnavailable) {
			t.Errorf("Reserve(%q, %+v, %+v) = %v, want an argument error", c.dep, c.cost, c.lim, err)
		}
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := s.Reserve(ctx, "", "d", budget.Cost{Tokens: 1}, wide(10, 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve with a cancelled context = %v", err)
	}
	// The other operations' arguments are checked before the driver sees
	// them, and the error names the operation.
	_, errBreaker := s.OpenBreaker(bg, "d", 0)
	_, errUsage := s.Usage(bg, "d", "")
	for op, err := range map[string]error{
		"settle":          s.Settle(bg, budget.Reservation{}, 1),
		"cancel":          s.Cancel(bg, budget.Reservation{Deployment: "d"}),
		"absorb":          s.Absorb(bg, "d", -1, 0),
		"effective limit": s.SetEffectiveLimit(bg, "d", 0, time.Second),
		"open breaker":    errBreaker,
		"usage":           errUsage,
	} {
		if err == nil || errors.Is(err, budget.ErrUnavailable) || !strings.Contains(err.Error(), op) {
			t.Errorf("%s with bad arguments = %v, want an argument error that names it", op, err)
		}
	}
	if st := s.Stats()["reserve"]; st.Calls != 1 || st.Errors != 1 {
		t.Errorf("reserve's counts %+v, want the one call that reached the driver, cancelled", st)
	}
}

func testConcurrent(t *testing.T, h Harness) {
	w := 3 * time.Second
	s := makeStore(t, h, w, budget.Hold)
	lim := budget.Limits{Tokens: 10000, Requests: 60000, Margin: 0.85}
	clearOf(w, 2*time.Second)
	var mu sync.Mutex
	admitted := map[int64]int64{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				cost := int64(10 + (g*50+i)%190)
				r, err := s.Reserve(bg, "", "d", budget.Cost{Tokens: cost}, lim)
				if err != nil {
					var ref *budget.Refusal
					if !errors.As(err, &ref) {
						t.Errorf("Reserve: %v", err)
						return
					}
					continue
				}
				mu.Lock()
				admitted[r.Window] += r.Tokens
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for win, n := range admitted {
		if n > lim.TokenCap(0) {
			t.Errorf("window %d admitted %d tokens, cap %d", win, n, lim.TokenCap(0))
		}
	}
}

func testSpacing(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	lim := budget.Limits{Tokens: 1 << 30, Requests: 60000, Spacing: 200 * time.Millisecond}
	first := reserve(t, s, "d", 1, lim)
	ref := refused(t, s, "d", 1, lim, budget.LimitSpacing)
	if ref.Wait > 200*time.Millisecond {
		t.Errorf("spacing wait %v, want at most 200ms", ref.Wait)
	}
	time.Sleep(ref.Wait + 5*time.Millisecond)
	second := reserve(t, s, "d", 1, lim)
	if gap := second.At.Sub(first.At); gap < 200*time.Millisecond {
		t.Errorf("admissions %v apart, spacing 200ms", gap)
	}
	// Without spacing the same deployment admits at once.
	reserve(t, s, "d", 1, budget.Limits{Tokens: 1 << 30, Requests: 60000})
}

func testAbsorb(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	clearOf(10*time.Second, 500*time.Millisecond) // the 10 s window holds still
	lim := budget.Limits{Tokens: 1000, Requests: 60000, Margin: 1}
	reserve(t, s, "d", 100, lim)
	if err := s.Absorb(bg, "d", 800, 3); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, s, "d"); u.Reserved != 900 || u.Requests10s != 4 {
		t.Errorf("after absorbing 800 tokens and 3 requests: %+v", u)
	} else if u.Requests1s > 1 {
		// Azure's count of its 10 s window does not say which second its
		// requests fell in: absorbed, they stay out of the 1 s window.
		t.Errorf("absorbed requests reached the 1 s window: %d requests there, want at most the one reserved", u.Requests1s)
	}
	refused(t, s, "d", 101, lim, budget.LimitTokens)
	// On a deployment with nothing reserved yet, absorbed use counts too.
	if err := s.Absorb(bg, "fresh", 950, 0); err != nil {
		t.Fatal(err)
	}
	refused(t, s, "fresh", 51, lim, budget.LimitTokens)
}

// testCensus: agents checked in are counted until they check out or their
// time runs out; 429s are counted per deployment and cause for the window
// they came in and the next, seen alike from a second handle.
func testCensus(t *testing.T, h Harness) {
	const w = 400 * time.Millisecond
	s := makeStore(t, h, w, budget.Hold)
	c, ok := s.Census()
	if !ok {
		t.Skip("the store keeps no census")
	}
	other, _ := reopen(t, h, s).Census()
	for _, a := range []string{"agent-1", "agent-2"} {
		if err := c.Checkin(bg, a, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Checkin(bg, "agent-3", 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(bg); err != nil || n.Agents != 3 {
		t.Fatalf("agents = %d, %v; want 3", n.Agents, err)
	}
	if err := c.Checkout(bg, "agent-2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n, _ := other.Count(bg); n.Agents != 1 {
		t.Errorf("after a checkout and a check-in that ran out: %d agents, want 1", n.Agents)
	}
	if err := c.Checkin(bg, "", time.Second); err == nil {
		t.Error("a check-in with no agent was accepted")
	}

	clearOf(w, 150*time.Millisecond)
	for _, cause := range []budget.Cause{budget.CauseTokens, budget.CauseTokens, budget.CauseRequests} {
		if err := c.Count429(bg, "a", cause); err != nil {
			t.Fatal(err)
		}
	}
	want := map[budget.Cause]int64{budget.CauseTokens: 2, budget.CauseRequests: 1, budget.CauseAdjustment: 0, budget.CauseUnknown: 0}
	n, err := other.Count(bg, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	for cause, v := range want {
		if n.RateLimited["a"][cause] != v {
			t.Errorf("a: %s = %d, want %d (all: %v)", cause, n.RateLimited["a"][cause], v, n.RateLimited["a"])
		}
		if n.RateLimited["b"][cause] != 0 {
			t.Errorf("b: %s = %d, want 0", cause, n.RateLimited["b"][cause])
		}
	}
	untilBoundary(w)
	if n, _ := c.Count(bg, "a"); n.RateLimited["a"][budget.CauseTokens] != 2 {
		t.Errorf("the window after: tokens = %d, want the previous window's 2", n.RateLimited["a"][budget.CauseTokens])
	}
	untilBoundary(w)
	if n, _ := c.Count(bg, "a"); n.RateLimited["a"][budget.CauseTokens] != 0 {
		t.Errorf("two windows on: tokens = %d, want 0", n.RateLimited["a"][budget.CauseTokens])
	}

	// Lost writes add up across handles, and outlive the windows.
	for _, lost := range []int64{2, 3} {
		if err := c.CountLostWrites(bg, "a", lost); err != nil {
			t.Fatal(err)
		}
	}
	untilBoundary(w)
	n, err = other.Count(bg, "a", "b")
	if err != nil || n.LostWrites["a"] != 5 || n.LostWrites["b"] != 0 {
		t.Errorf("lost writes told 2 and 3 on a, none on b: %v, %v", n.LostWrites, err)
	}
	if err := c.CountLostWrites(bg, "a", 0); err == nil {
		t.Error("a count of 0 lost writes was accepted")
	}

	// Prompt sums add up across handles, and outlive the windows.
	for _, p := range []budget.PromptTokens{{Prompt: 3000, Cached: 2048}, {Prompt: 1000, Cached: 0}} {
		if err := c.CountPrompt(bg, "a", p.Prompt, p.Cached); err != nil {
			t.Fatal(err)
		}
	}
	n, err = other.Count(bg, "a", "b")
	if want := (budget.PromptTokens{Prompt: 4000, Cached: 2048}); err != nil || n.Prompt["a"] != want || n.Prompt["b"] != (budget.PromptTokens{}) {
		t.Errorf("prompt sums told on a, none on b: %v, %v", n.Prompt, err)
	}
	if share := n.Prompt["a"].CachedShare(); share != 0.512 {
		t.Errorf("cached share %v, want 0.512", share)
	}
	for _, bad := range []budget.PromptTokens{{Prompt: 10, Cached: 11}, {Prompt: -1}} {
		if err := c.CountPrompt(bg, "a", bad.Prompt, bad.Cached); err == nil {
			t.Errorf("prompt sums %+v were accepted", bad)
		}
	}
}

// testTally: tallies added through two handles sum per key, read alike
// from either, keys round-trip whatever their fields hold but the
// separator, and a tally with a bad total or key is refused whole.
func testTally(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Second, budget.Hold)
	c, ok := s.Census()
	if !ok {
		t.Skip("the store keeps no census")
	}
	other, _ := reopen(t, h, s).Census()
	if got, err := other.ReadTally(bg); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a fresh store's tally = %v (nil %t), %v; want an empty one", got, got == nil, err)
	}

	calls := budget.TallyKey{Counter: budget.TallyCalls, Type: "chat"}
	limited := budget.TallyKey{Counter: budget.TallyRateLimited, Deployment: "gpt-4o-east", Label: string(budget.CauseTokens)}
	odd := budget.TallyKey{Counter: budget.TallyRuns, Type: "a|b c", Deployment: " d | e ", Label: "status | done "}
	shed := budget.TallyKey{Counter: budget.TallyShed, Label: "batch"}
	for _, add := range []struct {
		via budget.Census
		t   budget.Tally
	}{
		{c, budget.Tally{calls: 3, limited: 2}},
		{c, budget.Tally{calls: 4, odd: 1}},
		{other, budget.Tally{calls: 5, limited: 1, odd: 2, shed: 7}},
	} {
		if err := add.via.AddTally(bg, add.t); err != nil {
			t.Fatalf("add %v: %v", add.t, err)
		}
	}
	want := budget.Tally{calls: 12, limited: 3, odd: 3, shed: 7}
	same := func(what string, got budget.Tally, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d totals, want %d: %v", what, len(got), len(want), got)
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: %+v = %d, want %d", what, k, got[k], n)
			}
		}
	}
	got, err := other.ReadTally(bg)
	same("read through the other handle", got, err)
	got[calls] = 1000 // a copy: the store's totals are not the reader's to change
	delete(got, shed)
	got, err = c.ReadTally(bg)
	same("read again through the first handle", got, err)

	for _, bad := range []budget.Tally{
		{calls: 1, limited: 0},
		{calls: 1, limited: -4},
		{calls: 1, budget.TallyKey{Type: "chat"}: 1},
		{calls: 1, budget.TallyKey{Counter: budget.TallyCalls, Type: "ch\x1fat"}: 1},
		{calls: 1, budget.TallyKey{Counter: budget.TallyRefused, Type: "chat", Label: "mended\x1f"}: 1},
		{calls: 1, budget.TallyKey{Counter: "calls\x1f"}: 1},
		{calls: 1, budget.TallyKey{Counter: budget.TallyAnswered, Deployment: "\x1f"}: 1},
	} {
		if err := c.AddTally(bg, bad); err == nil {
			t.Errorf("tally %#v was accepted", bad)
		}
	}
	for _, empty := range []budget.Tally{{}, nil} {
		if err := other.AddTally(bg, empty); err != nil {
			t.Errorf("an empty tally (%#v) was refused: %v", empty, err)
		}
	}
	got, err = other.ReadTally(bg)
	same("after tallies refused and empty ones", got, err)
}
