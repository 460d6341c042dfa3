package budget

import (
	"context"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

// learner is one deployment's calibration as this process sees it: the
// fleet's, read from the store now and then, and what this process saw
// since it last told the store.
type learner struct {
	mu   sync.Mutex
	cal  learning.Calibration
	read time.Time // when cal was last read or written

	// Since the last push: the pairs of the window being read, and of
	// windows before it not yet handed in.
	fit        learning.Fit
	done       []learning.Fit
	lag        time.Duration
	t429, r429 bool
	pushed     time.Time
	pushing    bool
}

// calibrationEvery is how often a process reads and writes the fleet's
// calibration: once a second (a hundredth of the 1 s request window's
// allowance moves that slowly), sooner with a compressed window.
func calibrationEvery(window time.Duration) time.Duration {
	return min(time.Second, max(window/60, 10*time.Millisecond))
}

// calibrator is the store as a Calibrator when the router learns: false
// for the fixed model, or a store that keeps no calibration.
func (r *Router) calibrator() (Calibrator, bool) {
	cs, ok := r.store.Calibrator()
	return cs, ok && !r.opts.Fixed
}

// calibration is the model in force for rt.
func (rt *route) calibration() learning.Calibration {
	rt.learn.mu.Lock()
	defer rt.learn.mu.Unlock()
	return rt.learn.cal
}

// refresh reads the fleet's calibration of every route among routes not
// read for a while, in one round trip.
func (r *Router) refresh(ctx context.Context, routes []*route) {
	cs, ok := r.calibrator()
	if !ok {
		return
	}
	now := time.Now()
	every := calibrationEvery(r.store.Window())
	var stale []*route
	var keys []string
	for _, rt := range routes {
		rt.learn.mu.Lock()
		if now.Sub(rt.learn.read) >= every {
			// Claim the read: the process's other calls keep the model
			// they have rather than all ask at once.
			rt.learn.read = now
			stale = append(stale, rt)
			keys = append(keys, rt.d.QuotaKey)
		}
		rt.learn.mu.Unlock()
	}
	if len(stale) == 0 {
		return
	}
	got, err := cs.Calibrations(ctx, keys...)
	if err != nil {
		return // the last model stays in force; the call goes on
	}
	for i, rt := range stale {
		rt.learn.mu.Lock()
		rt.learn.cal = got[i]
		rt.learn.mu.Unlock()
	}
}

// observe takes what one answer says about the deployment's counter, and
// tells the store when enough time has passed, or at once on a 429.
func (r *Router) observe(ctx context.Context, l *Lease, o Outcome, fb Feedback, cause Cause) {
	cs, ok := r.calibrator()
	if !ok || !(o.Sent || o.Late) {
		return
	}
	rt, lr := l.route, &l.route.learn
	now := time.Now()
	limit := rt.d.QuotaTPM
	if fb.LimitTokens > 0 {
		limit = min(limit, fb.LimitTokens)
	}
	lr.mu.Lock()
	if w := l.Reservation.Window; o.OK() && fb.RemainingTokens >= 0 && l.Reservation.Held > 0 && w >= lr.fit.Window {
		if lr.fit.N > 0 && lr.fit.Window != w {
			// The window turned: its pairs go with the next push.
			lr.done = append(lr.done, lr.fit)
			lr.fit = learning.Fit{}
		}
		lr.fit.Window = w
		// What the fleet held itself, as Azure's window counts it.
		x := l.Reservation.Held - l.Reservation.Absorbed
		if lr.cal.Sliding {
			x += l.Reservation.Carried
		}
		lr.fit.Observe(float64(x), float64(limit-fb.RemainingTokens), float64(limit))
	}
	switch {
	case !o.Wrote.IsZero() && !l.admitted.IsZero():
		lr.lag = max(lr.lag, o.Wrote.Sub(l.admitted))
	case o.Late && !o.LateAt.IsZero() && !l.admitted.IsZero():
		// It would have left at least this late. It did not leave, so
		// nothing arrived late: the lesson is that processes need longer.
		// The send-by is half the lag (the other half is the way to the
		// server), so a call that needed this long to leave needs a lag
		// of twice it; and at least half as much again as the lag in
		// force, or a call that is a little late every time (a large
		// request to build) teaches nothing and stays late. At most twice
		// the allowance in force per reading: one process the host
		// stopped for seconds would otherwise pace the whole fleet at
		// that process's speed; a host that keeps its processes waiting
		// goes on doubling it.
		inForce := lr.cal.LagInForce(r.policy())
		lr.lag = max(lr.lag, min(max(2*o.LateAt.Sub(l.admitted), inForce*3/2), 2*inForce))
	}
	lr.t429 = lr.t429 || cause == CauseTokens
	lr.r429 = lr.r429 || cause == CauseRequests
	due := !lr.pushing && (len(lr.done) > 0 || lr.t429 || lr.r429 || o.Late || now.Sub(lr.pushed) >= calibrationEvery(r.store.Window()))
	// One push at a time per deployment: the others' readings wait for
	// the next.
	lr.pushing = lr.pushing || due
	lr.mu.Unlock()
	if due {
		r.push(ctx, cs, rt, limit)
	}
}

// push hands this process's reading of rt to the store and takes the
// fleet's calibration back.
func (r *Router) push(ctx context.Context, cs Calibrator, rt *route, limit int64) {
	lr := &rt.learn
	lr.mu.Lock()
	rd := learning.Reading{Fits: append(lr.done, lr.fit), Lag: lr.lag, Tokens429: lr.t429, Requests429: lr.r429}
	lr.done, lr.lag, lr.t429, lr.r429 = nil, 0, false, false
	lr.fit = learning.Fit{Window: lr.fit.Window}
	lr.pushed = time.Now()
	lr.mu.Unlock()
	policy := r.policy()
	c, err := cs.UpdateCalibration(ctx, rt.d.QuotaKey, func(c learning.Calibration) learning.Calibration {
		return c.Apply(rd, limit, policy, time.Now())
	})
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.pushing = false
	if err != nil {
		return // the reading is lost; the model errs as it stood
	}
	lr.cal, lr.read = c, time.Now()
}

// policy is the calibration policy for this router's config.
func (r *Router) policy() learning.Policy {
	p := r.opts.Calibration
	if p.Floor == 0 {
		p.Floor = r.cfg.Calibration.SafetyFloor
	}
	if p.ColdLag == 0 {
		p.ColdLag = r.cfg.Calibration.ColdLag
	}
	if p.Ceiling == 0 {
		p.Ceiling = 1 - r.cfg.Margin
		if r.cfg.Margin == 0 {
			p.Ceiling = 1 - DefaultMargin
		}
	}
	if p.Window == 0 {
		p.Window = r.store.Window()
	}
	return p
}

// Calibrations is the model in force for each deployment, by name, as
// this process last read it.
func (r *Router) Calibrations() map[string]learning.Calibration {
	out := map[string]learning.Calibration{}
	for _, routes := range r.pools {
		for _, rt := range routes {
			out[rt.d.Name] = rt.calibration()
		}
	}
	return out
}
