package budget

import (
	"errors"
	"sync/atomic"
)

// storeOp names a Store operation in its counts.
type storeOp int

const (
	opReserve storeOp = iota
	opSettle
	opCancel
	opFlush
	opLimit
	opBreaker
	opUsage
	opAbsorb
	nOps
)

// opNames are the operations as Stats and the metrics name them.
var opNames = [nOps]string{"reserve", "settle", "cancel", "flush", "effective_limit", "open_breaker", "usage", "absorb"}

// StoreOpStats counts one Store operation since the Store was made.
type StoreOpStats struct {
	// Calls counts the operation's calls, however often each asked.
	Calls int64
	// AskedAgain counts the asks after a call's first: the store did not
	// answer in time, or refused the connection.
	AskedAgain int64
	// Unavailable counts calls that ended without the store's answer
	// (their error wraps ErrUnavailable), Queued those of them whose
	// write the driver kept to send again (StoreError.Queued), and Errors
	// calls that ended in any other error. A refused reservation is an
	// answer, not an error.
	Unavailable, Queued, Errors int64
}

// opCounts are a Store's counters, one set per operation; atomic, as they
// are counted on every round trip.
type opCounts [nOps]struct {
	calls, again, unavailable, queued, errors atomic.Int64
}

// count counts one call of op that asked again `again` times and ended in
// err (nil or a refusal: an answer).
func (c *opCounts) count(op storeOp, err error, again int) {
	o := &c[op]
	o.calls.Add(1)
	o.again.Add(int64(again))
	var se *StoreError
	var ref *Refusal
	switch {
	case err == nil || errors.As(err, &ref):
	case errors.As(err, &se) && se.Queued:
		o.unavailable.Add(1)
		o.queued.Add(1)
	case errors.Is(err, ErrUnavailable):
		o.unavailable.Add(1)
	default:
		o.errors.Add(1)
	}
}

// Stats counts the Store's operations since it was made, by name
// (reserve, settle, cancel, flush, effective_limit, open_breaker, usage,
// absorb); an operation never called is absent.
func (s *Store) Stats() map[string]StoreOpStats {
	m := map[string]StoreOpStats{}
	for op := range nOps {
		o := &s.ops[op]
		st := StoreOpStats{Calls: o.calls.Load(), AskedAgain: o.again.Load(), Unavailable: o.unavailable.Load(), Queued: o.queued.Load(), Errors: o.errors.Load()}
		if st.Calls > 0 {
			m[opNames[op]] = st
		}
	}
	return m
}
