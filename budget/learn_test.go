package budget_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/learning"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// TestA429WidensTheModelForTheWholeFleet: one process meets a requests
// 429 and a tokens 429; another process, sharing the Redis store, paces
// and reserves by the widened model on its next call.
func TestA429WidensTheModelForTheWholeFleet(t *testing.T) {
	url := redistest.URL(t)
	prefix := "widen-" + budget.NewID()
	// Two processes: each its own client on the same keys.
	open := func() *budget.Store {
		rdb, err := redisstore.Dial(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(bg, redisstore.Options{Client: rdb, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(); rdb.Close() })
		return s
	}
	a, b := open(), open()
	cfg := config(t, "", "d:100000", "e:100000")
	ra, rb := router(t, a, cfg), router(t, b, cfg)

	// A tightened model, as if learned, written by a third party.
	cal, _ := b.Calibrator()
	if _, err := cal.UpdateCalibration(bg, "d", func(c learning.Calibration) learning.Calibration {
		c.Ratio, c.Weight, c.Safety, c.Lag = 1, 50, 0.03, time.Millisecond
		return c
	}); err != nil {
		t.Fatal(err)
	}

	for _, cause := range []string{"requests", "tokens"} {
		l, err := ra.Acquire(bg, budget.Call{Tokens: 100}, "e")
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Retry-After-Ms": {"1"}, "X-Ratelimit-Limit-Tokens": {"100000"}}
		if cause == "requests" {
			h.Set("X-Ratelimit-Remaining-Requests", "0")
			h.Set("X-Ratelimit-Remaining-Tokens", "90000")
		} else {
			h.Set("X-Ratelimit-Remaining-Tokens", "50")
		}
		if err := l.Done(bg, budget.Outcome{Sent: true, Status: http.StatusTooManyRequests, Header: h}); err != nil {
			t.Fatal(err)
		}
		if got := l.Cause(); string(got) != cause {
			t.Fatalf("classified as %q, want %s", got, cause)
		}
	}
	// d is full now (the tokens 429 said so): the call goes to e, and
	// reads the fleet's model of both on the way.
	l := acquire(t, rb, budget.Call{Tokens: 100})
	l.Done(bg, budget.Outcome{Sent: true, Status: 200})
	c := rb.Calibrations()["d"]
	if c.Extra < 99*time.Millisecond {
		t.Errorf("the other process paces with extra %v after a requests 429, want at least a tenth of the 1 s window", c.Extra)
	}
	if math.Abs(c.Safety-(1-budget.DefaultMargin)) > 1e-9 {
		t.Errorf("the other process keeps back %v after a tokens 429, want %v", c.Safety, 1-budget.DefaultMargin)
	}
}

// TestFixedRoutersLearnNothing: with calibration off in the config, the
// model stays as configured and nothing is written to the store.
func TestFixedRoutersLearnNothing(t *testing.T) {
	s := memStore()
	r := router(t, s, config(t, "calibration: {learn: false}\n", "d:100000"))
	l := acquire(t, r, budget.Call{Tokens: 100})
	l.Done(bg, budget.Outcome{Sent: true, Status: http.StatusTooManyRequests, Header: http.Header{"X-Ratelimit-Remaining-Requests": {"0"}}})
	cal, _ := s.Calibrator()
	got, _ := cal.Calibrations(bg, "d")
	if got[0] != (learning.Calibration{}) {
		t.Errorf("a fixed router wrote %+v", got[0])
	}
}

// TestALateProcessTeachesTwiceTheLagAtMost: a call held back because its
// process was stopped for seconds past its send-by raises the fleet's lag
// allowance to twice the one in force, not to the seconds it was stopped.
func TestALateProcessTeachesTwiceTheLagAtMost(t *testing.T) {
	s := memStore()
	cal, _ := s.Calibrator()
	if _, err := cal.UpdateCalibration(bg, "d", func(c learning.Calibration) learning.Calibration {
		c.Lag, c.Readings, c.Updated = 100*time.Millisecond, 10, time.Now()
		return c
	}); err != nil {
		t.Fatal(err)
	}
	r := router(t, s, config(t, "", "d:100000"))
	l := acquire(t, r, budget.Call{Tokens: 100})
	if err := l.Done(bg, budget.Outcome{Late: true, LateAt: time.Now().Add(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, err := cal.Calibrations(bg, "d")
	if err != nil {
		t.Fatal(err)
	}
	if lag := got[0].LagInForce(learning.Policy{}); lag < 190*time.Millisecond || lag > 210*time.Millisecond {
		t.Errorf("after a call late by 10 s the fleet's lag is %v, want twice the 100ms in force", lag)
	}
}

// TestACallALittleLateTeachesHalfAsMuchAgain: a call that missed its
// send-by by a little (a large request slow to build) raises the fleet's
// lag allowance to half as much again as the one in force, so the next
// lease gives it longer; a lesson of only what it was late by would leave
// the allowance where it was and the call late each time.
func TestACallALittleLateTeachesHalfAsMuchAgain(t *testing.T) {
	s := memStore()
	cal, _ := s.Calibrator()
	if _, err := cal.UpdateCalibration(bg, "d", func(c learning.Calibration) learning.Calibration {
		c.Lag, c.Readings, c.Updated = 100*time.Millisecond, 10, time.Now()
		return c
	}); err != nil {
		t.Fatal(err)
	}
	r := router(t, s, config(t, "", "d:100000"))
	l := acquire(t, r, budget.Call{Tokens: 100})
	if err := l.Done(bg, budget.Outcome{Late: true, LateAt: time.Now().Add(5 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	got, err := cal.Calibrations(bg, "d")
	if err != nil {
		t.Fatal(err)
	}
	if lag := got[0].LagInForce(learning.Policy{}); lag < 140*time.Millisecond || lag > 160*time.Millisecond {
		t.Errorf("after a call 5ms late the fleet's lag is %v, want half as much again as the 100ms in force", lag)
	}
}
