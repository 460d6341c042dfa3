package budget

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// Limit names the rule that refused a reservation.
type Limit string

const (
	LimitTokens      Limit = "tokens"       // the window's token cap
	LimitRequests1s  Limit = "requests_1s"  // the 1 s request window
	LimitRequests10s Limit = "requests_10s" // the 10 s request window
	LimitSpacing     Limit = "spacing"      // too soon after the last admission
	LimitBreaker     Limit = "breaker"      // the deployment's breaker is open
)

// Refusal is the error Reserve returns when the cost does not fit now.
type Refusal struct {
	Deployment string
	Limit      Limit
	// Wait is how long until the refusing limit has room again (by the
	// store's clock): the start of its next window, or the breaker's close.
	Wait time.Duration
	// TooLarge is set when the cost exceeds the token cap of a whole
	// window: waiting will not help.
	TooLarge bool
}

func (r *Refusal) Error() string {
	if r.TooLarge {
		return fmt.Sprintf("budget: %s: the call costs more tokens than one window allows", r.Deployment)
	}
	return fmt.Sprintf("budget: %s: %s limit reached; room in %v", r.Deployment, r.Limit, r.Wait.Round(time.Millisecond))
}

// WaitError is a 429 whose Retry-After runs past what the call can wait:
// its deadline, or MaxBreakerWait when it has none. It wraps ErrShed:
// the budget could not be had in time.
type WaitError struct {
	Deployment string
	Asked      Wait
	Left       time.Duration // what the call had left to wait
	Deadline   bool          // Left is to the call's deadline
}

func (e *WaitError) Error() string {
	past := "past the call's deadline, " + Wait{Seconds: max(0, e.Left.Seconds())}.String() + " away"
	if !e.Deadline {
		past = "longer than a call with no deadline waits (" + e.Left.String() + ")"
	}
	return fmt.Sprintf("%s asked to wait %s (%s), %s", e.Deployment, e.Asked, e.Asked.Header, past)
}

func (e *WaitError) Unwrap() error { return ErrShed }

// ErrUnavailable is what every store error wraps when the store cannot be
// reached or answers too slowly; test with errors.Is. The caller decides
// whether to wait, fail or fall back; the store never retries in a loop.
var ErrUnavailable = errors.New("budget store unavailable")

// StoreError means the store could not be reached, or answered too slowly.
// It wraps ErrUnavailable.
type StoreError struct {
	Op  string // reserve, settle, cancel, usage, …
	Err error
	// Queued says the write was kept all the same, to be sent again
	// while the store does not answer: asking again adds nothing, and
	// whether it was written in the end is the store's to report (a
	// driver's Flush or Close).
	Queued bool
}

func (e *StoreError) Error() string { return "budget store: " + e.Op + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() []error {
	return []error{ErrUnavailable, e.Err}
}

// Busy reports whether the store is there but did not answer: a round
// trip that timed out, or a server that said it cannot serve now (Redis'
// BUSY, LOADING, …). Asking again later may succeed; a refused connection
// is not busy, it is not there.
func (e *StoreError) Busy() bool {
	var ne net.Error
	var b interface{ Busy() bool }
	return errors.Is(e.Err, context.DeadlineExceeded) || errors.As(e.Err, &ne) && ne.Timeout() || errors.As(e.Err, &b) && b.Busy()
}

// idPrefix tells this process's ids from every other process's: 64 random
// bits, drawn once; a counter makes each id of the process unique, at a
// fraction of the cost of drawing random bits per reservation.
var (
	idPrefix = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand documents so)
		return hex.EncodeToString(b[:])
	}()
	idSeq atomic.Uint64
)

// NewID returns a fresh reservation id, unique across processes.
func NewID() string {
	return idPrefix + strconv.FormatUint(idSeq.Add(1), 36)
}

// validate checks a reservation's arguments before a driver sees them.
func validate(deployment string, cost Cost, lim Limits) error {
	switch {
	case deployment == "":
		return errors.New("budget: reserve: the deployment name is empty")
	case cost.Tokens < 0 || cost.Requests < 0:
		return fmt.Errorf("budget: reserve on %s: negative cost %+v", deployment, cost)
	case lim.Tokens <= 0 || lim.Requests <= 0:
		return fmt.Errorf("budget: reserve on %s: limits need tokens and requests above zero, got %+v", deployment, lim)
	}
	return nil
}
