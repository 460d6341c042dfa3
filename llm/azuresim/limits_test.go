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
