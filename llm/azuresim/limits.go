package azuresim

import (
	"time"
)

// Cause says which rule refused a call.
type Cause string

const (
	CauseTokens     Cause = "tokens"     // the minute's token count is spent
	CauseRequests   Cause = "requests"   // the 1 s or 10 s request window is full
	CauseAdjustment Cause = "adjustment" // it would fit the configured limit, not the lowered one
)

// window counts one meter's use. By default it is a fixed window that
// starts on a multiple of its length, so every caller that knows the length
// can tell where the boundaries are. A sliding one counts what was admitted
// in the last length of time from any instant, as a server that keeps no
// boundaries would; it keeps a log of the admissions still inside it, so
// it holds at most as many entries as it admitted in one length of time.
type window struct {
	length time.Duration
	index  int64
	used   int64

	sliding bool
	now     int64   // latest instant seen, in Unix nanoseconds; it never runs back
	log     []entry // admissions still counted, oldest first, from head
	head    int
	seq     int64 // the handle of log[head]
}

// entry is one admission in a sliding window's log.
type entry struct{ at, n int64 }

func (w *window) at(now time.Time) {
	if w.sliding {
		w.slide(now.UnixNano())
		return
	}
	if i := now.UnixNano() / int64(w.length); i != w.index {
		w.index, w.used = i, 0
	}
}

// slide moves a sliding window to now and forgets what has aged out: an
// admission at t counts during [t, t+length). Calls arrive in parallel and
// read the clock before they queue for the lock, so the window's clock
// only moves forward, keeping the log in time order.
func (w *window) slide(now int64) {
	w.now = max(w.now, now)
	for w.head < len(w.log) && w.log[w.head].at+int64(w.length) <= w.now {
		w.used -= w.log[w.head].n
		w.head++
		w.seq++
	}
	switch {
	case w.head == len(w.log):
		w.log, w.head = w.log[:0], 0
	case w.head >= 32 && w.head > len(w.log)/2:
		// Compact now and then rather than on every step: amortised O(1).
		w.log = w.log[:copy(w.log, w.log[w.head:])]
		w.head = 0
	}
}

// add counts n at the instant the window was last moved to and returns
// the handle a refund names: the fixed window's index, or the
// admission's place in the sliding log.
func (w *window) add(n int64) int64 {
	w.used += n
	if !w.sliding {
		return w.index
	}
	w.log = append(w.log, entry{at: w.now, n: n})
	return w.seq + int64(len(w.log)-1-w.head)
}

// refund takes n back from what the admission of handle added, if it is
// still counted: a window that is gone, or an admission that has aged
// out, needs nothing.
func (w *window) refund(handle, n int64) {
	if !w.sliding {
		if w.index == handle {
			w.used = max(0, w.used-n)
		}
		return
	}
	i := handle - w.seq
	if i < 0 || i >= int64(len(w.log)-w.head) {
		return
	}
	e := &w.log[w.head+int(i)]
	n = min(n, e.n)
	e.n -= n
	w.used -= n
}

// untilNext is how long until the window after the current one starts.
func (w *window) untilNext(now time.Time) time.Duration {
	return time.Duration((w.index+1)*int64(w.length) - now.UnixNano())
}

// wait is how long until n more fit under limit: the next fixed window,
// or until enough of the sliding log has aged out.
func (w *window) wait(now time.Time, n, limit int64) time.Duration {
	if !w.sliding {
		return w.untilNext(now)
	}
	over := w.used + n - limit
	for _, e := range w.log[w.head:] {
		if over -= e.n; over <= 0 {
			return time.Duration(e.at + int64(w.length) - w.now)
		}
	}
	// n alone is over the limit: it never fits, so say a whole length.
	return w.length
}

// held is when the admissions a sliding window still counts were
// counted, oldest first; nil for a fixed window, which keeps no times.
func (w *window) held() []time.Time {
	if !w.sliding {
		return nil
	}
	out := make([]time.Time, 0, len(w.log)-w.head)
	for _, e := range w.log[w.head:] {
		out = append(out, time.Unix(0, e.at))
	}
	return out
}

// reset is how long until the window is back to its full allowance: the
// next fixed window, or until every admission in the sliding log has
// aged out (0 when there is none).
func (w *window) reset(now time.Time) time.Duration {
	if !w.sliding {
		return w.untilNext(now)
	}
	if w.head == len(w.log) {
		return 0
	}
	return time.Duration(w.log[len(w.log)-1].at + int64(w.length) - w.now)
}

// meter counts one quota: tokens per window and requests per 1 s and 10 s
// (both scaled with the window). A deployment has one; a shared pool has one
// that all its deployments also charge.
type meter struct {
	tpm, rpm int64
	tokens   window
	req1     window // RPM/60 per second
	req10    window // RPM/6 per ten seconds
	adjust   []adjustment
}

type adjustment struct {
	from, until time.Time
	factor      float64
}

func newMeter(tpm, rpm int64, minute time.Duration) *meter {
	return &meter{
		tpm: tpm, rpm: rpm,
		tokens: window{length: minute},
		req1:   window{length: minute / 60},
		req10:  window{length: minute / 6},
	}
}

// slide makes the request windows, the token window or both sliding.
func (m *meter) slide(requests, tokens bool) {
	m.req1.sliding, m.req10.sliding = requests, requests
	m.tokens.sliding = tokens
}

func (m *meter) req1Limit() int64  { return max(1, m.rpm/60) }
func (m *meter) req10Limit() int64 { return max(1, m.rpm/6) }

// tokenLimit is the effective token limit at now: the configured one times
// the lowest active adjustment.
func (m *meter) tokenLimit(now time.Time) int64 {
	f := 1.0
	kept := m.adjust[:0]
	for _, a := range m.adjust {
		if !now.Before(a.until) {
			continue
		}
		kept = append(kept, a)
		if !now.Before(a.from) && a.factor < f {
			f = a.factor
		}
	}
	m.adjust = kept
	return int64(float64(m.tpm) * f)
}

// refusal is why a meter would not take a call, and when it could.
type refusal struct {
	cause Cause
	wait  time.Duration
	// requests1s is set when the 1 s window refused: its remaining count
	// is what a client should see, not the 10 s one.
	requests1s bool
	// full is the request window that refused, for the refusal log.
	full  *window
	limit int64
}

// check reports whether cost tokens and one request fit now, without
// charging. It returns every refusal; the caller picks the longest wait.
func (m *meter) check(now time.Time, cost int64) []refusal {
	m.tokens.at(now)
	m.req1.at(now)
	m.req10.at(now)
	var out []refusal
	if lim := m.tokenLimit(now); m.tokens.used+cost > lim {
		c := CauseTokens
		if lim < m.tpm && m.tokens.used+cost <= m.tpm {
			c = CauseAdjustment
		}
		out = append(out, refusal{cause: c, wait: m.tokens.wait(now, cost, lim)})
	}
	if m.req1.used+1 > m.req1Limit() {
		out = append(out, refusal{cause: CauseRequests, wait: m.req1.wait(now, 1, m.req1Limit()), requests1s: true, full: &m.req1, limit: m.req1Limit()})
	}
	if m.req10.used+1 > m.req10Limit() {
		out = append(out, refusal{cause: CauseRequests, wait: m.req10.wait(now, 1, m.req10Limit()), full: &m.req10, limit: m.req10Limit()})
	}
	return out
}

// charge counts cost tokens and one request at the instant check was
// given, and returns the handle refund takes.
func (m *meter) charge(cost int64) int64 {
	m.req1.add(1)
	m.req10.add(1)
	return m.tokens.add(cost)
}

// refund gives back n tokens if what they were charged to still counts:
// the current fixed window, or an admission the sliding window still
// holds. A past window is gone and needs nothing.
func (m *meter) refund(handle, n int64) { m.tokens.refund(handle, n) }

// state is what the rate-limit headers report.
type state struct {
	limitTokens, remainingTokens     int64
	limitRequests, remainingRequests int64
	resetTokens, resetRequests       time.Duration
}

func (m *meter) state(now time.Time) state {
	m.tokens.at(now)
	m.req10.at(now)
	lim := m.tokenLimit(now)
	return state{
		limitTokens:       lim,
		remainingTokens:   max(0, lim-m.tokens.used),
		limitRequests:     m.req10Limit(),
		remainingRequests: max(0, m.req10Limit()-m.req10.used),
		resetTokens:       m.tokens.reset(now),
		resetRequests:     m.req10.reset(now),
	}
}

// tighter merges two states, keeping the one with less room left of each.
func tighter(a, b state) state {
	if b.remainingTokens < a.remainingTokens || (b.remainingTokens == a.remainingTokens && b.limitTokens < a.limitTokens) {
		a.limitTokens, a.remainingTokens, a.resetTokens = b.limitTokens, b.remainingTokens, b.resetTokens
	}
	if b.remainingRequests < a.remainingRequests {
		a.limitRequests, a.remainingRequests, a.resetRequests = b.limitRequests, b.remainingRequests, b.resetRequests
	}
	return a
}
