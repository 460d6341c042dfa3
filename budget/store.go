// Package budget spends Azure OpenAI allowances on purpose: it reserves each
// call's pessimistic cost before the call is sent, settles it afterwards, and
// shares the count with every other process of the fleet.
//
// A Store holds each deployment's counters: tokens per window, requests per
// 1 s and 10 s, and the state other processes must see (the effective token
// limit read from Azure's headers, and a circuit breaker's open-until time).
// It is a small face over a Driver: NewMemStore keeps the counters in this
// process, budget/redisstore in Redis for a fleet; both drivers pass the
// same conformance suite, budget/storetest. A Router spends a Store's
// counters on calls, choosing the deployment with the most headroom.
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store is the shared reservation store, as callers use it. The rules
// every driver shares live here once: arguments are checked before a
// driver sees them; a store that does not answer is asked again, at one
// pace (WaitToAskAgain), within the context's deadline or
// DefaultStorePatience, with the same reservation id each time so a
// later ask never charges twice; and every round trip is counted by
// operation (Stats). Every method is safe for concurrent use.
//
// The zero Store keeps its counters in this process, as
// NewMemStore(MemOptions{}) does.
type Store struct {
	once sync.Once
	d    Driver
	ops  opCounts
}

// NewStore returns the Store over d. d must not be nil.
func NewStore(d Driver) *Store {
	if d == nil {
		panic("budget: NewStore: nil Driver")
	}
	return &Store{d: d}
}

// driver is the Store's driver: a zero Store's is an in-memory one.
func (s *Store) driver() Driver {
	s.once.Do(func() {
		if s.d == nil {
			s.d = newMemDriver(MemOptions{})
		}
	})
	return s.d
}

// Reserve charges cost to the deployment's current windows, all of it or
// none. On refusal the error is a *Refusal that says which limit refused
// and when room frees; a refusal is an answer, not asked again. id makes
// the call idempotent: a second Reserve with the same id returns the
// first one's reservation without charging again. An empty id is replaced
// by a fresh one (NewID).
func (s *Store) Reserve(ctx context.Context, id, deployment string, cost Cost, lim Limits) (Reservation, error) {
	if err := validate(deployment, cost, lim); err != nil {
		return Reservation{}, err
	}
	if id == "" {
		id = NewID()
	}
	var res Reservation
	err := s.persist(ctx, opReserve, func() (err error) {
		res, err = s.driver().Reserve(ctx, id, deployment, cost, lim)
		return err
	})
	return res, err
}

// Settle records what the call really used, against the window it was
// charged to. Under the Refund policy the unused part is given back.
// Settling twice, or after Cancel, does nothing. A store may write
// settles behind, so they cost the call's path no round trip; Flush waits
// until they are written.
func (s *Store) Settle(ctx context.Context, r Reservation, actualTokens int64) error {
	if err := made(r, "settle"); err != nil {
		return err
	}
	// A negative use, which only an answer's own usage field could
	// claim, would give back others' room; the reservation is still
	// settled, as having used nothing.
	actualTokens = max(0, actualTokens)
	return s.persist(ctx, opSettle, func() error { return s.driver().Settle(ctx, r, actualTokens) })
}

// Cancel gives back everything a reservation charged: the call was never
// sent. It does nothing after Settle or a first Cancel.
func (s *Store) Cancel(ctx context.Context, r Reservation) error {
	if err := made(r, "cancel"); err != nil {
		return err
	}
	return s.persist(ctx, opCancel, func() error { return s.driver().Cancel(ctx, r) })
}

// Flush returns once every settle this process made is visible to all,
// and returns those the store could not write. It is not asked again:
// what it waits on is already being sent again.
func (s *Store) Flush(ctx context.Context) error {
	err := s.driver().Flush(ctx)
	s.ops.count(opFlush, err, 0)
	return err
}

// SetEffectiveLimit records a token limit observed from a response, valid
// for ttl; reservations use the lower of it and the configured one.
func (s *Store) SetEffectiveLimit(ctx context.Context, deployment string, tokens int64, ttl time.Duration) error {
	switch {
	case deployment == "":
		return errors.New("budget: effective limit: the deployment name is empty")
	case tokens <= 0 || ttl <= 0:
		return fmt.Errorf("budget: effective limit on %s: %d tokens for %v; both must be above zero", deployment, tokens, ttl)
	}
	return s.persist(ctx, opLimit, func() error { return s.driver().SetEffectiveLimit(ctx, deployment, tokens, ttl) })
}

// OpenBreaker refuses reservations on the deployment for d (keeping a
// later open-until already set), and returns the open-until time.
func (s *Store) OpenBreaker(ctx context.Context, deployment string, d time.Duration) (time.Time, error) {
	switch {
	case deployment == "":
		return time.Time{}, errors.New("budget: open breaker: the deployment name is empty")
	case d <= 0:
		return time.Time{}, fmt.Errorf("budget: open breaker on %s: %v is not a time to stay open", deployment, d)
	}
	var until time.Time
	err := s.persist(ctx, opBreaker, func() (err error) {
		until, err = s.driver().OpenBreaker(ctx, deployment, d)
		return err
	})
	return until, err
}

// Usage reads the state of many deployments in one round trip, in the
// order asked.
func (s *Store) Usage(ctx context.Context, deployments ...string) ([]Usage, error) {
	for i, d := range deployments {
		if d == "" {
			return nil, fmt.Errorf("budget: usage: deployment %d of %d has an empty name", i+1, len(deployments))
		}
	}
	var us []Usage
	err := s.persist(ctx, opUsage, func() (err error) {
		us, err = s.driver().Usage(ctx, deployments...)
		return err
	})
	return us, err
}

// Absorb adds use that Azure reports and the store did not see (other
// clients of the deployment) to the current token and 10 s windows,
// unconditionally. Requests are not added to the 1 s window: a count of
// the 10 s window does not say which second its requests fell in.
func (s *Store) Absorb(ctx context.Context, deployment string, tokens, requests int64) error {
	switch {
	case deployment == "":
		return errors.New("budget: absorb: the deployment name is empty")
	case tokens < 0 || requests < 0:
		return fmt.Errorf("budget: absorb on %s: negative use (%d tokens, %d requests)", deployment, tokens, requests)
	}
	return s.persist(ctx, opAbsorb, func() error { return s.driver().Absorb(ctx, deployment, tokens, requests) })
}

// Window is the length of the token window.
func (s *Store) Window() time.Duration { return s.driver().Window() }

// Close writes what is still queued, releases the driver's backend, and
// returns what it could not write.
func (s *Store) Close() error { return s.driver().Close() }

// Census is the fleet's census, when the driver keeps one (both of the
// project's do); ok is false when it does not.
func (s *Store) Census() (c Census, ok bool) {
	c, ok = s.driver().(Census)
	return c, ok
}

// Calibrator is where the fleet keeps what it learned of each
// deployment, when the driver keeps it (both of the project's do); ok is
// false when it does not.
func (s *Store) Calibrator() (c Calibrator, ok bool) {
	c, ok = s.driver().(Calibrator)
	return c, ok
}

// made checks a reservation handed back to Settle or Cancel.
func made(r Reservation, op string) error {
	if r.ID == "" || r.Deployment == "" {
		return fmt.Errorf("budget: %s: the reservation has no id or deployment (%+v); pass the one Reserve returned", op, r)
	}
	return nil
}

// storeTries is how often a store that refuses the connection is asked
// before the round trip fails, waiting 50, 100 and 200 ms between:
// nothing listens, and a call should not wait long to say so.
const storeTries = 4

// DefaultStorePatience is how long a round trip with no deadline waits
// for a store that does not answer.
const DefaultStorePatience = 30 * time.Second

// maxStoreWait is the longest wait between two asks of a busy store: a
// stalled server is asked about once a second, not hammered, and a call
// waits at most that long past its return.
const maxStoreWait = time.Second

// WaitToAskAgain waits before asking a store that did not answer for
// the try-th time (from 1): 50 ms, then twice as long each time up to
// maxStoreWait. It reports false, at once, when that wait would pass
// giveUp, and when ctx ends meanwhile: the last failure is then the
// answer. Store asks again at this pace, and a driver that must wait
// for its backend while it opens does too.
func WaitToAskAgain(ctx context.Context, try int, giveUp time.Time) bool {
	wait := min(maxStoreWait, time.Duration(25<<min(max(try, 1), 6))*time.Millisecond)
	if time.Until(giveUp) <= wait {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// persist runs f, one round trip of operation op, until it succeeds or is
// refused; a refusal is an answer, not a failure. A busy store (one that
// did not answer in time) is asked again, waiting 50 ms, then twice as
// long each time up to maxStoreWait, until ctx's deadline, or
// DefaultStorePatience when it has none: a stall costs the call time, not
// the call. A store that refuses the connection is asked storeTries times.
// A write the driver queued (StoreError.Queued) is not asked again: it is
// the driver's to send. The last failure is the answer; persist never
// waits past ctx's deadline.
//
// This is the one place a store round trip is tried again: neither the
// drivers below nor the router and llm above do.
func (s *Store) persist(ctx context.Context, op storeOp, f func() error) error {
	giveUp := time.Now().Add(DefaultStorePatience)
	if dl, ok := ctx.Deadline(); ok {
		giveUp = dl
	}
	var err, storeErr error // the last failure, and the store's last
	for try, refused := 0, 0; ; try++ {
		if try > 0 && !WaitToAskAgain(ctx, try, giveUp) {
			s.ops.count(op, err, try-1)
			return err
		}
		err = f()
		var ref *Refusal
		switch {
		case err == nil || errors.As(err, &ref):
			s.ops.count(op, nil, try)
			return err
		case ctx.Err() != nil && storeErr != nil:
			// The deadline ended the last ask: the store not answering
			// is why.
			s.ops.count(op, storeErr, try)
			return storeErr
		case ctx.Err() != nil:
			s.ops.count(op, err, try)
			return err
		}
		var se *StoreError
		if !errors.As(err, &se) || se.Queued {
			s.ops.count(op, err, try)
			return err // an answer of another kind, or a write the store keeps: asking again gives the same
		}
		storeErr = err
		if !se.Busy() {
			if refused++; refused >= storeTries {
				s.ops.count(op, err, try)
				return err
			}
		}
	}
}
