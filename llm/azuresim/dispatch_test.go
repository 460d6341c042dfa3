package azuresim

import (
	"slices"
	"testing"
	"time"
)

// A starved host's lag: a lognormal around the configured delay, whose
// tail reaches hundreds of milliseconds and stops at the cap.
func TestDispatchDelayLongTail(t *testing.T) {
	for _, c := range []struct {
		max, wantMax time.Duration
	}{{0, 400 * time.Millisecond}, {150 * time.Millisecond, 150 * time.Millisecond}} {
		sim, err := New(Config{Seed: 7, Deployments: []Deployment{{Name: "a", Model: "gpt-4o", TPM: 1000,
			DispatchDelay: 20 * time.Millisecond, DispatchTail: 1, DispatchMax: c.max}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := sim.lookup(sim.resources[0].name, "a")
		var got []time.Duration
		for range 20000 {
			got = append(got, sim.dispatchDelay(d))
		}
		slices.Sort(got)
		q := func(f float64) time.Duration { return got[int(f*float64(len(got)-1))] }
		if m := q(0.5); m < 18*time.Millisecond || m > 22*time.Millisecond {
			t.Errorf("max %v: median %v, want about 20ms", c.max, m)
		}
		if p99 := q(0.99); c.max == 0 && (p99 < 150*time.Millisecond || p99 > 260*time.Millisecond) {
			t.Errorf("99th percentile %v, want about 205ms", p99)
		}
		if top := got[len(got)-1]; top != c.wantMax {
			t.Errorf("max %v: the longest delay %v, want the cap %v", c.max, top, c.wantMax)
		}
	}
}
