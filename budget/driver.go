package budget

import (
	"context"
	"time"
)

// A Driver keeps a Store's counters: what a store package (the memory one
// here, budget/redisstore for a fleet) implements, and only that. Callers
// use *Store, which checks the arguments, asks again, and counts, so a
// driver does none of it: it is given valid arguments, answers each call
// with one round trip, and wraps a failure to reach its backend in a
// *StoreError. Every method is safe for concurrent use. Every driver
// passes the conformance suite, budget/storetest.
//
// A driver may also keep the fleet's census (Census) and what the fleet
// learned of each deployment (Calibrator); Store.Census and
// Store.Calibrator say whether it does.
type Driver interface {
	// Reserve charges cost to the deployment's current windows, all of it
	// or none. On refusal the error is a *Refusal that says which limit
	// refused and when room frees. id is never empty and makes the call
	// idempotent: a second Reserve with the same id returns the first
	// one's reservation without charging again.
	Reserve(ctx context.Context, id, deployment string, cost Cost, lim Limits) (Reservation, error)
	// Settle records what the call really used, against the window it was
	// charged to. Under the Refund policy the unused part is given back.
	// Settling twice, or after Cancel, does nothing. A driver may write
	// settles behind, so they cost the call's path no round trip (a
	// failure is then a *StoreError with Queued set); Flush waits until
	// they are written.
	Settle(ctx context.Context, r Reservation, actualTokens int64) error
	// Flush returns once every settle this process made is visible to all,
	// and returns those it could not write.
	Flush(ctx context.Context) error
	// Cancel gives back everything a reservation charged: the call was
	// never sent. It does nothing after Settle or a first Cancel.
	Cancel(ctx context.Context, r Reservation) error

	// SetEffectiveLimit records a token limit observed from a response,
	// valid for ttl; reservations use the lower of it and the configured one.
	SetEffectiveLimit(ctx context.Context, deployment string, tokens int64, ttl time.Duration) error
	// OpenBreaker refuses reservations on the deployment for d (keeping a
	// later open-until already set), and returns the open-until time.
	OpenBreaker(ctx context.Context, deployment string, d time.Duration) (time.Time, error)
	// Usage reads the state of many deployments in one round trip.
	Usage(ctx context.Context, deployments ...string) ([]Usage, error)
	// Absorb adds use that Azure reports and the store did not see (other
	// clients of the deployment) to the current token and 10 s windows,
	// unconditionally. Requests are not added to the 1 s window: a count
	// of the 10 s window does not say which second its requests fell in.
	Absorb(ctx context.Context, deployment string, tokens, requests int64) error

	// Window is the length of the token window.
	Window() time.Duration
	// Close writes what is still queued, releases the backend, and
	// returns what it could not write.
	Close() error
}
