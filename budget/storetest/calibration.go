package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/learning"
)

// testHeld: a reservation says what the window held once it was admitted,
// and how much of that was use absorbed from headers.
func testHeld(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	other := reopen(t, h, s)
	clearOf(time.Minute, time.Second)
	lim := budget.Limits{Tokens: 100000, Requests: 60000, Margin: 1}
	if r := reserve(t, s, "d", 100, lim); r.Held != 100 {
		t.Errorf("first reservation: held %d, want 100", r.Held)
	}
	if err := s.Absorb(bg, "d", 5000, 0); err != nil {
		t.Fatal(err)
	}
	if r := reserve(t, other, "d", 250, lim); r.Held != 5350 || r.Absorbed != 5000 {
		t.Errorf("second reservation, from another handle, after 5,000 absorbed: held %d of which absorbed %d, want 5,350 and 5,000", r.Held, r.Absorbed)
	}
}

// testCalibration: a calibration is kept per deployment, shared by every
// handle, read many at once, and updated atomically under concurrent
// writers (none of their updates is lost).
func testCalibration(t *testing.T, h Harness) {
	s := makeStore(t, h, time.Minute, budget.Hold)
	c, ok := s.Calibrator()
	if !ok {
		t.Skip("the store keeps no calibration")
	}
	other, _ := reopen(t, h, s).Calibrator()
	got, err := c.Calibrations(bg, "a", "b")
	if err != nil || len(got) != 2 || got[0] != (learning.Calibration{}) || got[1] != (learning.Calibration{}) {
		t.Fatalf("before anything was learned: %+v, %v; want two zero calibrations", got, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	want := learning.Calibration{Ratio: 1.1, Weight: 12, Safety: 0.05, Lag: 7 * time.Millisecond, Extra: time.Millisecond,
		Open: learning.Fit{Window: 42, N: 3, SX: 1, SY: 2, SXX: 3, SYY: 4, SXY: 5}, Widened: at, Slowed: at, Tightened: at, Updated: at}
	if _, err := c.UpdateCalibration(bg, "a", func(learning.Calibration) learning.Calibration { return want }); err != nil {
		t.Fatal(err)
	}
	got, err = other.Calibrations(bg, "b", "a")
	if err != nil || got[0] != (learning.Calibration{}) || !got[1].Updated.Equal(at) {
		t.Fatalf("read from another handle: %+v, %v", got, err)
	}
	got[1].Widened, got[1].Slowed, got[1].Tightened, got[1].Updated = at, at, at, at // equal instants, maybe another location
	if got[1] != want {
		t.Errorf("read back %+v, want %+v", got[1], want)
	}

	const writers, each = 8, 10
	var wg sync.WaitGroup
	for i := range writers {
		st := c
		if i%2 == 1 {
			st = other
		}
		wg.Go(func() {
			for range each {
				if _, err := st.UpdateCalibration(bg, "b", func(c learning.Calibration) learning.Calibration { c.Weight++; return c }); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got, _ := c.Calibrations(bg, "b"); got[0].Weight != writers*each {
		t.Errorf("after %d concurrent updates: weight %v", writers*each, got[0].Weight)
	}
	if _, err := c.UpdateCalibration(bg, "", func(c learning.Calibration) learning.Calibration { return c }); err == nil {
		t.Error("a calibration with no deployment was accepted")
	}
}
