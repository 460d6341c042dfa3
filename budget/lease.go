package budget

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Outcome is how one attempt of a call ended.
type Outcome struct {
	// Sent is false when the call never left this process: its
	// reservation is cancelled.
	Sent bool
	// Status is the HTTP status; 0 with Err when no answer came.
	Status int
	Header http.Header
	// UsedTokens is what the answer's usage says (prompt + completion).
	UsedTokens int64
	// Wrote is when the request was written to the connection, when the
	// sender knows it: calibration measures the lag from admission to it.
	Wrote time.Time
	// Late says the sender did not send because the lease's SendBy had
	// passed before the request could leave (Sent is false); At is when
	// it gave up.
	Late   bool
	LateAt time.Time
	Err    error
}

// OK reports a 2xx answer the sender could read. A 2xx with an Err is an
// answer that came and was not the API's (a proxy's page, a body cut
// short or past its bound): not a success, and not retried.
func (o Outcome) OK() bool { return o.Sent && o.answered() && o.Err == nil }

func (o Outcome) answered() bool { return o.Status >= 200 && o.Status < 300 }

// Retryable reports an answer another attempt may fix: 429, 408, 5xx, or
// no answer at all. Other 4xx mean the request is wrong and would be wrong
// everywhere; a 400 that succeeds elsewhere is a routing bug (see
// Call.Resource), not a reason to retry.
func (o Outcome) Retryable() bool {
	if !o.Sent {
		return false
	}
	switch {
	case o.Status == http.StatusTooManyRequests, o.Status == http.StatusRequestTimeout, o.Status >= 500:
		return true
	case o.Status == 0:
		return o.Err != nil && !errors.Is(o.Err, context.Canceled) && !errors.Is(o.Err, context.DeadlineExceeded)
	}
	return false
}

// Done ends the lease with what happened: it settles or cancels the
// reservation (an answer that came and could not be read keeps its
// charge), feeds the headers back (a lowered limit, use the store did
// not see), opens the shared breaker on a 429 for its Retry-After (at
// most MaxBreakerWait), and counts server errors toward the local
// breaker. Each of those writes is asked again while the store does not
// answer, within ctx's deadline (else DefaultStorePatience; 2 s
// more when ctx has already ended); one that still fails is counted
// (MetricsSnapshot.StoreWritesFailed) and returned, joined with any
// other: a breaker the fleet never saw, a reservation held to its
// window's end. The call's answer stands either way. Cause says what a
// 429 was.
func (l *Lease) Done(ctx context.Context, o Outcome) error {
	if l.ended {
		return nil
	}
	l.ended = true
	if ctx.Err() != nil {
		// The caller gave up (a deadline, a SIGTERM): the reservation is
		// still the fleet's to give back, and a breaker still the fleet's
		// to hear of. A short while more, not the caller's.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), writeAfterCancel)
		defer cancel()
	}
	now := time.Now()
	fb := ParseFeedback(o.Header, now)
	l.cause = l.done(ctx, o, fb, now)
	l.router.observe(ctx, l, o, fb, l.cause)
	return errors.Join(l.failed...)
}

// writeAfterCancel bounds Done's writes once the caller's context has
// ended.
const writeAfterCancel = 2 * time.Second

// WritesFailed is how many of Done's writes the store did not take, for
// this lease and, of a lease Do returned, the leases the same call took
// before it (a 429 moved elsewhere, a late lease reserved again). Each
// is counted in MetricsSnapshot.StoreWritesFailed too.
func (l *Lease) WritesFailed() int { return l.before + len(l.failed) }

// Cause is why the call was refused, once Done has read a 429; empty
// for any other outcome.
func (l *Lease) Cause() Cause { return l.cause }

// write makes one write of Done's, asked again while the store does not
// answer; one that still fails is counted and kept for Done to return.
func (l *Lease) write(ctx context.Context, op string, f func() error) {
	err := f()
	var se *StoreError
	switch {
	case err == nil:
		l.router.tellLost(ctx) // the store answers again
		return
	case errors.As(err, &se) && se.Queued:
		return // the store's to write (see StoreError.Queued)
	}
	d := l.Deployment.Name
	l.router.metrics.writeFailed(d, op)
	l.router.lost.add(l.Deployment.QuotaKey, 1)
	l.failed = append(l.failed, fmt.Errorf("budget: %s on %s: %w", op, d, err))
}

func (l *Lease) done(ctx context.Context, o Outcome, fb Feedback, now time.Time) Cause {
	r, d, st := l.router, l.Deployment, l.router.store
	r.feedback(ctx, l, fb)
	settle := func(tokens int64) {
		l.write(ctx, WriteSettle, func() error { return st.Settle(ctx, l.Reservation, tokens) })
	}
	openBreaker := func(wait time.Duration) {
		l.write(ctx, WriteBreaker, func() error {
			_, err := st.OpenBreaker(ctx, d.QuotaKey, wait)
			return err
		})
	}
	switch {
	case !o.Sent:
		l.cancel(ctx)
		l.route.br.release(l.probe)
	case o.OK():
		settle(o.UsedTokens)
		l.route.br.success()
		r.metrics.add(func(m *MetricsSnapshot) { m.ByDeployment[d.Name]++ })
	case o.Status == http.StatusTooManyRequests:
		// Refused at the door: Azure charged nothing for it.
		l.cancel(ctx)
		l.route.br.release(l.probe)
		cause := classify(fb, d.QuotaTPM, l.Reservation.Tokens)
		r.metrics.limited(d.Name, cause)
		r.census429(d, cause)
		wait := min(fb.RetryAfter, MaxBreakerWait)
		if wait <= 0 {
			wait = time.Second
		}
		openBreaker(wait)
		return cause
	case o.Sent && o.answered():
		// An answer came and could not be read: Azure may have charged
		// it, so the charge is kept. Asking again would get the same.
		settle(0)
		l.route.br.release(l.probe)
	case o.Retryable():
		// The call may have been admitted and charged: keep the charge.
		settle(0)
		r.metrics.add(func(m *MetricsSnapshot) {
			if o.Status == 0 {
				m.TransportErrors++
			} else {
				m.ServerErrors++
			}
		})
		if backoff, trip := l.route.br.failure(now, l.probe); trip {
			openBreaker(backoff)
			r.metrics.add(func(m *MetricsSnapshot) { m.BreakerTrips++ })
		}
	default:
		l.cancel(ctx)
		l.route.br.release(l.probe)
	}
	return ""
}

// The writes Done makes, as MetricsSnapshot.StoreWritesFailed counts
// them.
const (
	WriteSettle  = "settle"
	WriteCancel  = "cancel"
	WriteBreaker = "open_breaker"
	WriteLimit   = "effective_limit"
	WriteAbsorb  = "absorb"
	// WriteCensus is a 429 counted in the store's census, behind the
	// call's back: counted when lost, never returned by Done.
	WriteCensus = "census_429"
)

// tooLong is a *WaitError when w, what deployment asked a call to wait,
// runs past the call's deadline, or past MaxBreakerWait for a call with
// none; nil when the call can wait it out.
func tooLong(ctx context.Context, deployment string, w Wait) *WaitError {
	e := &WaitError{Deployment: deployment, Asked: w, Left: MaxBreakerWait}
	if dl, ok := ctx.Deadline(); ok {
		e.Left, e.Deadline = time.Until(dl), true
	}
	if !(w.Seconds > 0) || w.Duration() <= e.Left {
		return nil
	}
	return e
}

// MaxBreakerWait bounds how long one 429 closes a deployment to the
// fleet: an answer that asks for longer (a Retry-After in the year 9999)
// is taken at this, and the call after it, refused again if the wait was
// meant, costs one 429, which Azure does not charge.
const MaxBreakerWait = 10 * time.Minute

// cancel gives the reservation back, asking a store that does not answer
// again (the id counts once): until it answers, the room stays held.
func (l *Lease) cancel(ctx context.Context) {
	l.write(ctx, WriteCancel, func() error { return l.router.store.Cancel(ctx, l.Reservation) })
}

// feedback corrects the shared model from an answer's headers.
func (r *Router) feedback(ctx context.Context, l *Lease, fb Feedback) {
	d := l.Deployment
	limit := d.QuotaTPM
	if fb.LimitTokens > 0 && fb.LimitTokens < d.QuotaTPM {
		// The effective limit moved: route against it, fleet-wide, until
		// answers stop saying so.
		limit = fb.LimitTokens
		l.write(ctx, WriteLimit, func() error { return r.store.SetEffectiveLimit(ctx, d.QuotaKey, fb.LimitTokens, 2*r.store.Window()) })
		r.metrics.add(func(m *MetricsSnapshot) { m.EffectiveLimits++ })
	}
	// Azure may know of use we did not see (other clients of the
	// deployment); take its word when it says more is used than we hold.
	// What we hold is counted at the ratio Azure is seen to charge it at,
	// so charging more than we estimate is not taken for other clients.
	var tokens, requests int64
	if fb.RemainingTokens >= 0 {
		ours, absorbed := l.Reservation.Held, l.Reservation.Absorbed
		if ours == 0 {
			// A store that does not say what it held: what it held when
			// the call was chosen, and this call.
			ours = l.Reservation.Tokens
			if l.seen.Window == l.Reservation.Window {
				ours += l.seen.Reserved
			}
		}
		ratio, sliding := 1.0, false
		if !r.opts.Fixed {
			cal := l.route.calibration()
			ratio, sliding = cal.RatioInForce(), cal.Sliding
		}
		// Azure counts our own at the ratio, and others' use as it is; a
		// sliding window still counts part of the last window's.
		var carried int64
		seen := func() float64 { return ratio*float64(ours-absorbed+carried) + float64(absorbed) }
		used := float64(limit - fb.RemainingTokens)
		if used > seen()+float64(limit/50) {
			// Calls admitted after this one may have reached Azure before
			// it: look again at what the window holds now, which counts
			// every call admitted before this one's answer came back.
			if us, err := r.store.Usage(ctx, d.QuotaKey); err == nil && len(us) == 1 && us[0].Window == l.Reservation.Window {
				ours, absorbed = us[0].Reserved, us[0].Absorbed
				if sliding {
					carried = us[0].Carried
				}
			}
			if used > seen()+float64(limit/50) {
				tokens = int64(used - seen())
			}
		}
	}
	if fb.RemainingRequests >= 0 && fb.LimitRequests > 0 {
		requests = r.unseenRequests(ctx, l, fb.LimitRequests-fb.RemainingRequests)
	}
	if tokens > 0 || requests > 0 {
		l.write(ctx, WriteAbsorb, func() error { return r.store.Absorb(ctx, d.QuotaKey, tokens, requests) })
		r.metrics.add(func(m *MetricsSnapshot) { m.AbsorbedTokens += tokens })
	}
}

// unseenRequests is how many of the requests Azure says its window holds
// (used) the store has not counted. The count seen when the call was
// chosen is only a floor: every call admitted since then and answered
// before this one is in Azure's count too, and in the store's. So a count
// that looks short is read again, and only what the store still lacks is
// absorbed; read against the old count, each answer of the calls in flight
// would add the same gap again.
func (r *Router) unseenRequests(ctx context.Context, l *Lease, used int64) int64 {
	counted := l.seen.Requests10s + 1
	if used <= counted {
		return 0
	}
	if us, err := r.store.Usage(ctx, l.Deployment.QuotaKey); err == nil && len(us) == 1 {
		counted = max(counted, us[0].Requests10s)
	}
	return max(0, used-counted)
}

// maxLate bounds how often one call may be reserved again because it was
// not sent by its lease's SendBy.
const maxLate = 8

// CallError is a call that failed after the attempts it was allowed.
type CallError struct {
	Deployment string // the last one tried
	Status     int    // its answer; 0 when none came
	Cause      Cause  // for a 429
	Attempts   int
	Err        error
}

func (e *CallError) Error() string {
	what := fmt.Sprintf("status %d", e.Status)
	switch {
	case e.Status == 0 && e.Err != nil:
		what = e.Err.Error()
	case e.Cause != "":
		what += " (" + string(e.Cause) + ")"
	}
	return fmt.Sprintf("budget: call failed on %s after %d attempt(s): %s", e.Deployment, e.Attempts, what)
}

func (e *CallError) Unwrap() error { return e.Err }

// Do places c, sends it with send, and tries again where another attempt
// could succeed: a 429 moves to another deployment at once, as do 408, 5xx
// and connection errors. It makes at most as many attempts as the pool has
// deployments, plus RouterOptions.ExtraWaits attempts that wait for one it
// already tried (waiting out a Retry-After is cheaper than failing). A
// deployment whose 429 asks for a wait past the call's deadline (past
// MaxBreakerWait for a call with none) is not waited for: the call moves
// on, and when no deployment is left it fails at once, with a *WaitError
// that says so (it wraps ErrShed). Other 4xx are returned at once. A
// store that does not answer is asked again, each round trip (reading
// usage, reserving) up to storeTries times within ctx's deadline, and the
// call is not tried again for it: a store still down ends the call with
// its error, which wraps ErrUnavailable. On success it returns the answer
// and the lease it went out on.
func (r *Router) Do(ctx context.Context, c Call, send func(context.Context, *Lease) Outcome) (Outcome, *Lease, error) {
	routes, err := r.candidates(c)
	if err != nil {
		return Outcome{}, nil, err
	}
	// One call, however many leases it takes: a 429 moved elsewhere, a
	// late lease reserved again. Attempts after the first are Retries.
	r.metrics.add(func(m *MetricsSnapshot) { m.Calls++ })
	var tried, gone []string // gone asked to wait past what the call can
	var writesFailed int     // by the leases ended so far
	var last Outcome
	var lastLease *Lease
	var cause Cause
	attempts, made, late := len(routes)+*r.opts.ExtraWaits, 0, 0
	for a := 0; a < attempts; a++ {
		exclude := tried
		if len(tried) >= len(routes) {
			exclude = gone // every one failed once: wait for the best again
		}
		l, err := r.acquire(ctx, c, routes, exclude)
		if err != nil {
			r.metrics.add(func(m *MetricsSnapshot) { m.Failed++ })
			return last, nil, err
		}
		if a > 0 {
			r.metrics.add(func(m *MetricsSnapshot) { m.Retries++ })
		}
		o := send(ctx, l)
		l.before = writesFailed
		// Done's error is counted in the router's metrics and in
		// l.WritesFailed; the call goes on, and its answer stands.
		_ = l.Done(ctx, o)
		writesFailed = l.WritesFailed()
		if o.Late && late < maxLate {
			// Not sent: reserve again, without spending an attempt.
			late++
			a--
			continue
		}
		if o.Late && o.Err == nil {
			// Said, or the call's error would be "status 0" and nothing.
			o.Err = fmt.Errorf("not sent: past its lease's send-by %d times (this process was not scheduled in time for the fleet's request pacing)", late+1)
		}
		made++
		cause = l.Cause()
		if o.OK() {
			r.metrics.add(func(m *MetricsSnapshot) { m.Completed++ })
			return o, l, nil
		}
		last, lastLease = o, l
		if !o.Retryable() {
			break
		}
		if !slices.Contains(tried, l.Deployment.Name) {
			tried = append(tried, l.Deployment.Name)
		}
		if o.Status != http.StatusTooManyRequests {
			continue
		}
		if w := tooLong(ctx, l.Deployment.Name, askedWait(o.Header, time.Now())); w != nil {
			gone = append(gone, l.Deployment.Name)
			if len(gone) >= len(routes) {
				r.metrics.add(func(m *MetricsSnapshot) { m.Failed++ })
				r.metrics.shed(c.Class)
				return last, lastLease, fmt.Errorf("%w: %w", &CallError{Deployment: l.Deployment.Name, Status: o.Status, Cause: cause, Attempts: made, Err: o.Err}, w)
			}
		}
	}
	r.metrics.add(func(m *MetricsSnapshot) { m.Failed++ })
	return last, lastLease, &CallError{Deployment: lastLease.Deployment.Name, Status: last.Status, Cause: cause, Attempts: made, Err: last.Err}
}
