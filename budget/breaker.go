package budget

import (
	"sync"
	"time"
)

// breaker is the reactive layer under the predictive one: repeated server
// errors or timeouts open it with a growing backoff; once the backoff ends
// it is half-open and lets one probe through; the probe's success closes
// it. The open state is also published to the store (OpenBreaker), so the
// rest of the fleet skips the deployment too. 429s open the store's
// breaker directly, for their Retry-After, and do not count here: a 429 is
// the allowance talking, not the deployment failing.
//
// It is hand-written rather than taken from a breaker library because its
// open interval comes from the store (a Retry-After or another process's
// trip) and its probe must coexist with that shared state.
type breaker struct {
	mu        sync.Mutex
	failures  int // consecutive
	level     int // trips since the last success: the backoff's exponent
	openUntil time.Time
	probing   bool
}

const (
	tripAfter   = 3 // consecutive failures
	backoffBase = time.Second
	backoffMax  = time.Minute
)

// allow says whether a call may go now: closed, or half-open with no probe
// in flight.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.openUntil) {
		return false
	}
	return !b.probing
}

// startProbe marks the call just admitted as the half-open probe, when the
// breaker has tripped before and its backoff is over.
func (b *breaker) startProbe() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.level == 0 || b.probing {
		return false
	}
	b.probing = true
	return true
}

// success closes the breaker.
func (b *breaker) success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.level, b.probing, b.openUntil = 0, 0, false, time.Time{}
}

// failure counts a server error or timeout; it returns the backoff when it
// trips (a failed probe trips at once).
func (b *breaker) failure(now time.Time, probe bool) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	b.failures++
	if b.failures < tripAfter && !probe {
		return 0, false
	}
	d := min(backoffMax, backoffBase<<min(b.level, 6))
	b.level++
	b.failures = 0
	b.openUntil = now.Add(d)
	return d, true
}

// release ends a probe that settled nothing (a 429, a cancelled call).
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// until is how long the breaker stays open.
func (b *breaker) until(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.openUntil.Sub(now)
}
