package azuresim

import (
	"testing"
	"time"
)

// A refusal carries the simulator's lateness in counting the calls of the
// window that refused, and of the refused call, not of calls outside it;
// the log of lags keeps no more than the longest window holds.
func TestARefusalReadsTheSimulatorsLatenessInItsWindow(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	d := &deployment{own: newMeter(1000, 120, time.Minute)}
	d.noteLag(ms(0), 700*time.Millisecond)
	d.noteLag(ms(1_500), 30*time.Millisecond)
	d.noteLag(ms(1_800), 90*time.Millisecond)

	d.logRefusal(refusal{full: &d.own.req1, limit: 2}, ms(2_000), 10*time.Millisecond)
	d.logRefusal(refusal{full: &d.own.req1, limit: 2}, ms(2_000), 200*time.Millisecond)
	d.logRefusal(refusal{full: &d.own.req10, limit: 20}, ms(2_000), 0)
	want := []time.Duration{90 * time.Millisecond, 200 * time.Millisecond, 700 * time.Millisecond}
	for i, r := range d.stats.Refusals {
		if r.CountLagMax != want[i] {
			t.Errorf("refusal %d (%v window): count lag %v, want %v", i, r.Window, r.CountLagMax, want[i])
		}
	}

	for n := range 100 {
		d.noteLag(ms(20_000+100*n), time.Millisecond)
	}
	if kept := len(d.lags); kept > 2*100 {
		t.Errorf("the lag log holds %d entries for 100 admissions", kept)
	}
	for _, l := range d.lags[d.lagsHead:] {
		if l.at.Before(ms(20_000)) {
			t.Errorf("an admission of %v is still read, 10 s on", l.at.Sub(base))
		}
	}
}
