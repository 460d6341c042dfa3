package azuresim

import (
	"testing"
	"time"
)

// Window arithmetic, at chosen instants rather than the wall clock.
func TestMeterWindows(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)   // on a minute boundary
	m := newMeter(1000, 120, time.Minute) // 2 a second, 20 in ten seconds

	if r := m.check(base, 1000); len(r) != 0 {
		t.Fatalf("a call of exactly the limit is refused: %+v", r)
	}
	m.charge(1000)
	r := m.check(base.Add(30*time.Second), 1)
	if len(r) != 1 || r[0].cause != CauseTokens || r[0].wait != 30*time.Second {
		t.Fatalf("one token past the limit: %+v", r)
	}
	if r := m.check(base.Add(time.Minute), 1000); len(r) != 0 {
		t.Fatalf("the next window is fresh: %+v", r)
	}

	m = newMeter(1_000_000, 120, time.Minute)
	at := base.Add(250 * time.Millisecond)
	m.check(at, 1)
	m.charge(1)
	m.charge(1)
	r = m.check(at, 1)
	if len(r) != 1 || r[0].cause != CauseRequests || !r[0].requests1s || r[0].wait != 750*time.Millisecond {
		t.Fatalf("third call in one second: %+v", r)
	}
	// Fill the ten-second window two a second.
	for s := 1; s < 10; s++ {
		now := base.Add(time.Duration(s) * time.Second)
		if r := m.check(now, 1); len(r) != 0 {
			t.Fatalf("second %d: %+v", s, r)
		}
		m.charge(1)
		m.charge(1)
	}
	r = m.check(base.Add(9500*time.Millisecond), 1)
	if len(r) != 2 || r[1].requests1s || r[1].wait != 500*time.Millisecond {
		t.Fatalf("21st call in ten seconds: %+v", r)
	}
}

func TestMeterRefundOnlyToItsOwnWindow(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	m := newMeter(1000, 600, time.Minute)
	m.check(base, 500)
	m.charge(500)
	idx := m.tokens.index
	m.refund(idx, 200)
	if m.tokens.used != 300 {
		t.Fatalf("refund in the same window: used %d", m.tokens.used)
	}
	m.check(base.Add(time.Minute), 100)
	m.charge(100)
	m.refund(idx, 300) // the old window is gone: nothing to give back
	if m.tokens.used != 100 {
		t.Fatalf("refund to a past window touched the current one: used %d", m.tokens.used)
	}
}

func TestMeterAdjustmentCause(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	m := newMeter(1000, 600, time.Minute)
	m.adjust = []adjustment{{from: base, until: base.Add(10 * time.Second), factor: 0.5}}
	if r := m.check(base, 800); len(r) != 1 || r[0].cause != CauseAdjustment {
		t.Fatalf("fits the configured limit, not the lowered one: %+v", r)
	}
	if r := m.check(base, 1200); len(r) != 1 || r[0].cause != CauseTokens {
		t.Fatalf("fits neither: %+v", r)
	}
	if got := m.tokenLimit(base.Add(10 * time.Second)); got != 1000 || len(m.adjust) != 0 {
		t.Fatalf("after the adjustment: limit %d, %d adjustments kept", got, len(m.adjust))
	}
}

// Sliding windows at chosen instants: what was admitted in the last length
// counts, whatever boundary lies between.
func TestSlidingMeterCountsTheLastLength(t *testing.T) {
	base := time.Unix(1_800_000_000, 0) // on a minute boundary
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	fixed := newMeter(1000, 120, time.Minute) // 2 a second, 20 in ten seconds
	m := newMeter(1000, 120, time.Minute)
	m.slide(true, true)
	for _, mt := range []*meter{fixed, m} {
		mt.check(ms(900), 600)
		mt.charge(600)
		mt.check(ms(950), 100)
		mt.charge(100)
	}
	// Past the 1 s boundary a fixed window is fresh; the sliding one still
	// holds both calls until the first is a second old.
	if r := fixed.check(ms(1100), 1); len(r) != 0 {
		t.Fatalf("fixed, after the boundary: %+v", r)
	}
	r := m.check(ms(1100), 1)
	if len(r) != 1 || r[0].cause != CauseRequests || !r[0].requests1s || r[0].wait != 800*time.Millisecond {
		t.Fatalf("sliding, third call within a second: %+v, want a 1 s refusal waiting 800ms", r)
	}
	if r := m.check(ms(1899), 1); len(r) != 1 {
		t.Fatalf("sliding, 1 ms before the first call is a second old: %+v", r)
	}
	if r := m.check(ms(1900), 1); len(r) != 0 {
		t.Fatalf("sliding, when the first call is a second old: %+v", r)
	}
	if st := m.state(ms(1900)); st.remainingRequests != 20-2 || st.remainingTokens != 300 || st.resetRequests != 9050*time.Millisecond || st.resetTokens != 59050*time.Millisecond {
		t.Fatalf("state %+v: the 10 s window and the minute hold both calls until the second is that old", st)
	}

	// 400 tokens need 100 of the 700 counted to age out: the first call's
	// 600, at 60.9 s. 1,001 never fit.
	r = m.check(ms(2000), 400)
	if len(r) != 1 || r[0].cause != CauseTokens || r[0].wait != 58900*time.Millisecond {
		t.Fatalf("400 tokens over the limit: %+v", r)
	}
	if r := m.check(ms(2000), 1001); len(r) != 1 || r[0].wait != time.Minute {
		t.Fatalf("more than the limit: %+v, want a minute's wait", r)
	}
	if r := m.check(ms(60_900), 400); len(r) != 0 || m.tokens.used != 100 {
		t.Fatalf("after the first call aged out: %+v, %d counted", r, m.tokens.used)
	}
	if st := m.state(ms(60_950)); st.remainingTokens != 1000 || st.resetTokens != 0 {
		t.Fatalf("with nothing left in the window: %+v", st)
	}
}

func TestSlidingRefundGoesToItsOwnAdmission(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	m := newMeter(1000, 600, time.Minute)
	m.slide(false, true)
	m.check(base, 500)
	first := m.charge(500)
	m.check(base.Add(30*time.Second), 300)
	second := m.charge(300)
	m.refund(first, 200)
	m.refund(second, 1000) // no more than it was charged
	if m.tokens.used != 300 {
		t.Fatalf("after refunds: %d counted, want 300", m.tokens.used)
	}
	m.check(base.Add(time.Minute), 1) // the first call ages out
	if m.tokens.used != 0 {
		t.Fatalf("the first call's remainder did not age out: %d counted", m.tokens.used)
	}
	m.refund(first, 100) // aged out: nothing to give back
	m.check(base.Add(61*time.Second), 50)
	m.charge(50)
	m.refund(second, 10)
	if m.tokens.used != 50 {
		t.Fatalf("a refund to an empty admission touched another: %d counted", m.tokens.used)
	}
}

// Calls read the clock before they queue for the lock: a sliding window
// takes an instant earlier than one it has seen as that one, so its log
// stays in time order.
func TestSlidingWindowClockOnlyMovesForward(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	m := newMeter(1000, 60_000, time.Minute)
	m.slide(true, true)
	m.check(base.Add(time.Second), 100)
	m.charge(100)
	m.check(base, 100)
	m.charge(100)
	if got := m.tokens.log[m.tokens.head+1].at; got != base.Add(time.Second).UnixNano() {
		t.Fatalf("a call seen out of order was logged at %v", time.Unix(0, got))
	}
}

// The log holds what the window holds, not everything ever admitted.
func TestSlidingLogStaysBounded(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	m := newMeter(1_000_000, 120, time.Minute) // 2 a second, 20 in ten seconds
	m.slide(true, true)
	for i := range 100_000 {
		now := base.Add(time.Duration(i) * 500 * time.Millisecond)
		if r := m.check(now, 1); len(r) != 0 {
			t.Fatalf("call %d, two a second: %+v", i, r)
		}
		m.charge(1)
		for _, w := range []*window{&m.req1, &m.req10, &m.tokens} {
			live := len(w.log) - w.head
			if int64(live) != w.used || len(w.log) > 2*live+64 {
				t.Fatalf("call %d: the %v window logs %d entries, %d of them live, counting %d", i, w.length, len(w.log), live, w.used)
			}
		}
	}
}
