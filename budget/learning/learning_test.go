package learning_test

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const limit = 120000

// window returns the pairs of one token window in which Azure counted
// ratio × what the fleet held, plus offset (other clients' use, less what
// was still on its way).
func window(w int64, ratio, offset float64) learning.Fit {
	f := learning.Fit{Window: w}
	for x := 5000.0; x <= 100000; x += 5000 {
		f.Add(x, ratio*x+offset)
	}
	return f
}

// run applies one reading per window, a window apart, and returns the
// calibration after each.
func run(c learning.Calibration, p learning.Policy, fits ...learning.Fit) []learning.Calibration {
	var out []learning.Calibration
	for i, f := range fits {
		c = c.Apply(learning.Reading{Fits: []learning.Fit{f}}, limit, p, t0.Add(time.Duration(i)*p.Window))
		out = append(out, c)
	}
	return out
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestCalibrationLearnsTheRatioAndTightens(t *testing.T) {
	p := learning.Policy{Window: time.Minute}
	for _, ratio := range []float64{0.9, 1.0, 1.1} {
		var fits []learning.Fit
		for w := range int64(7) {
			fits = append(fits, window(w, ratio, 3000)) // other clients: a constant 3,000
		}
		cs := run(learning.Calibration{}, p, fits...)
		// The first window's slope is read when the second's pairs arrive.
		if c := cs[1]; !near(c.Ratio, ratio, 0.001) {
			t.Errorf("ratio %v: learned %v after two windows", ratio, c.Ratio)
		}
		last := cs[len(cs)-1]
		if !near(last.Safety, learning.DefaultSafetyFloor, 1e-9) {
			t.Errorf("ratio %v: safety after %d quiet windows is %v, want the floor %v (%+v)", ratio, len(cs), last.Safety, learning.DefaultSafetyFloor, last)
		}
		// Reserving at the learned margin, Azure is charged 97% of the limit.
		if got := last.Margin(p) * ratio; !near(got, 1-learning.DefaultSafetyFloor, 1e-6) {
			t.Errorf("ratio %v: Azure would be charged %v of the limit", ratio, got)
		}
		for i := 1; i < len(cs); i++ {
			if cs[i].Safety > cs[i-1].Safety && cs[i-1].Safety != 0 {
				t.Errorf("ratio %v: safety rose from %v to %v without a 429", ratio, cs[i-1].Safety, cs[i].Safety)
			}
		}
	}
}

func TestCalibrationWidensAtOnce(t *testing.T) {
	p := learning.Policy{Window: time.Minute}
	var fits []learning.Fit
	for w := range int64(6) {
		fits = append(fits, window(w, 1.0, 0))
	}
	tight := run(learning.Calibration{}, p, fits...)[5]
	if tight.Safety >= 0.1 {
		t.Fatalf("did not tighten: %+v", tight)
	}
	at := t0.Add(6 * time.Minute)

	// A tokens 429 puts the whole margin back.
	c := tight.Apply(learning.Reading{Tokens429: true}, limit, p, at)
	if !near(c.Safety, learning.DefaultCeiling, 1e-9) {
		t.Errorf("after a tokens 429: safety %v, want %v", c.Safety, learning.DefaultCeiling)
	}
	// It does not come down again within the window.
	if c2 := c.Apply(learning.Reading{Fits: []learning.Fit{window(7, 1.0, 0)}}, limit, p, at.Add(30*time.Second)); c2.Safety != c.Safety {
		t.Errorf("tightened %v after the 429, want a window's wait", at.Add(30*time.Second).Sub(c.Widened))
	}

	// Azure charging 10% more than the model allows for widens and
	// believes the new ratio at once, not averaged with the old one.
	c = tight.Apply(learning.Reading{Fits: []learning.Fit{window(6, 1.1, 0)}}, limit, p, at)
	c = c.Apply(learning.Reading{Fits: []learning.Fit{window(7, 1.1, 0)}}, limit, p, at.Add(time.Second))
	if !near(c.Ratio, 1.1, 0.001) || !near(c.Safety, learning.DefaultCeiling, 1e-9) {
		t.Errorf("after a window charged at 1.1: ratio %v safety %v, want 1.1 and %v", c.Ratio, c.Safety, learning.DefaultCeiling)
	}
}

func TestCalibrationIgnoresWindowsThatAreNotALine(t *testing.T) {
	p := learning.Policy{Window: time.Minute}
	// A server whose window slides: what it counts stays near the limit
	// while our fixed window starts again from nothing.
	flat := learning.Fit{Window: 1}
	for x := 5000.0; x <= 100000; x += 5000 {
		flat.Add(x, 110000+float64(int(x)%7000))
	}
	few := learning.Fit{Window: 2}
	few.Add(1000, 1100)
	few.Add(50000, 55000)
	cs := run(learning.Calibration{}, p, flat, few, learning.Fit{Window: 3})
	for i, c := range cs {
		if c.Ratio != 0 || c.Weight != 0 {
			t.Errorf("step %d learned ratio %v (weight %v) from pairs that are no line", i, c.Ratio, c.Weight)
		}
		if c.Margin(p) != 1-learning.DefaultCeiling {
			t.Errorf("step %d: margin %v, want the configured %v", i, c.Margin(p), 1-learning.DefaultCeiling)
		}
	}
	// A window already read adds nothing.
	c := cs[2].Apply(learning.Reading{Fits: []learning.Fit{window(1, 1.5, 0)}}, limit, p, t0.Add(3*time.Minute))
	if c.Open.Window != 2 || c.Ratio != 0 {
		t.Errorf("a late reading of window 1 changed the model: %+v", c)
	}
}

func TestCalibrationFleetPairsMerge(t *testing.T) {
	// Two processes each see every other pair of one window; together
	// they read its slope.
	a, b := learning.Fit{Window: 1}, learning.Fit{Window: 1}
	for i, x := 0, 5000.0; x <= 100000; i, x = i+1, x+5000 {
		f := &a
		if i%2 == 1 {
			f = &b
		}
		f.Add(x, 1.2*x)
	}
	p := learning.Policy{Window: time.Minute}
	c := learning.Calibration{}.Apply(learning.Reading{Fits: []learning.Fit{a}}, limit, p, t0)
	c = c.Apply(learning.Reading{Fits: []learning.Fit{b}}, limit, p, t0.Add(time.Second))
	c = c.Apply(learning.Reading{Fits: []learning.Fit{{Window: 2}}}, limit, p, t0.Add(time.Minute))
	if c.Ratio != 0 { // an empty fit of a later window reads nothing
		t.Fatalf("an empty reading closed the window: %+v", c)
	}
	next := learning.Fit{Window: 2}
	next.Add(1, 1)
	c = c.Apply(learning.Reading{Fits: []learning.Fit{next}}, limit, p, t0.Add(time.Minute))
	if !near(c.Ratio, 1.2, 0.001) || c.Weight != 20 {
		t.Errorf("merged: ratio %v weight %v, want 1.2 from 20 pairs", c.Ratio, c.Weight)
	}
}

func TestCalibrationPacingAllowance(t *testing.T) {
	p := learning.Policy{Window: time.Minute}
	var c learning.Calibration
	if got := c.Allowance(p); got != learning.DefaultColdLag {
		t.Errorf("cold allowance %v, want %v", got, learning.DefaultColdLag)
	}
	// The cold margin holds through the first readings, however short
	// the lag they measured, then gives way at once to the highest.
	for i, lag := range []time.Duration{2, 6, 4} {
		if got := c.Allowance(p); got != learning.DefaultColdLag {
			t.Errorf("after %d readings: %v, want the cold allowance", i, got)
		}
		c = c.Apply(learning.Reading{Lag: lag * time.Millisecond}, limit, p, t0.Add(time.Duration(i)*time.Second))
	}
	if got := c.Allowance(p); got != 6*time.Millisecond {
		t.Errorf("after three readings: %v, want the highest of them, 6ms", got)
	}
	// A longer lag is taken at once.
	c = c.Apply(learning.Reading{Lag: 80 * time.Millisecond}, limit, p, t0.Add(3*time.Second))
	if got := c.Allowance(p); got != 80*time.Millisecond {
		t.Errorf("after an 80 ms lag: %v", got)
	}
	// The excess over what is seen halves once a minute.
	c = c.Apply(learning.Reading{Lag: 2 * time.Millisecond}, limit, p, t0.Add(63*time.Second))
	if got, want := c.Allowance(p), 41*time.Millisecond; got != want {
		t.Errorf("a window later: %v, want %v", got, want)
	}
	// A cold lag longer than the margin is taken at once too.
	var hot learning.Calibration
	hot = hot.Apply(learning.Reading{Lag: 2 * time.Second}, limit, p, t0)
	if got := hot.Allowance(p); got != 2*time.Second {
		t.Errorf("a first reading of 2 s: %v", got)
	}
	// A requests 429 adds what no client can time, once per 1 s window,
	// doubling, never past the window.
	at := t0.Add(62 * time.Second)
	c = c.Apply(learning.Reading{Requests429: true}, limit, p, at)
	if c.Extra != 100*time.Millisecond {
		t.Errorf("after a requests 429: extra %v, want a tenth of the 1 s window", c.Extra)
	}
	c = c.Apply(learning.Reading{Requests429: true}, limit, p, at.Add(10*time.Millisecond))
	if c.Extra > 100*time.Millisecond {
		t.Errorf("a second 429 in the same second doubled it to %v", c.Extra)
	}
	for i := range 6 {
		c = c.Apply(learning.Reading{Requests429: true}, limit, p, at.Add(time.Duration(i+1)*time.Second))
	}
	if c.Extra != time.Second {
		t.Errorf("after seven seconds with 429s: extra %v, want the 1 s window", c.Extra)
	}
	// What a 429 taught halves in ten minutes.
	c = c.Apply(learning.Reading{}, limit, p, c.Updated.Add(10*time.Minute))
	if !near(float64(c.Extra), float64(500*time.Millisecond), float64(time.Millisecond)) {
		t.Errorf("ten minutes on: extra %v, want 500ms", c.Extra)
	}
}
