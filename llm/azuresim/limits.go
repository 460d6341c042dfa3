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

// window is a fixed window that starts on a multiple of its length, so every
// caller that knows the length can tell where the boundaries are.
type window struct {
	length time.Duration
	index  int64
	used   int64
}

func (w *window) at(now time.Time) {
	if i := now.UnixNano() / int64(w.length); i != w.index {
		w.index, w.used = i, 0
	}
}

// untilNext is how long until the window after the current one starts.
func (w *window) untilNext(now time.Time) time.Duration {
	return time.Duration((w.index+1)*int64(w.length) - now.UnixNano())
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
		out = append(out, refusal{cause: c, wait: m.tokens.untilNext(now)})
	}
	if m.req1.used+1 > m.req1Limit() {
		out = append(out, refusal{cause: CauseRequests, wait: m.req1.untilNext(now), requests1s: true})
	}
	if m.req10.used+1 > m.req10Limit() {
		out = append(out, refusal{cause: CauseRequests, wait: m.req10.untilNext(now)})
	}
	return out
}

func (m *meter) charge(cost int64) {
	m.tokens.used += cost
	m.req1.used++
	m.req10.used++
}

// refund gives back n tokens if the window they were charged to is still
// the current one; a past window is gone and needs nothing.
func (m *meter) refund(index, n int64) {
	if m.tokens.index == index {
		m.tokens.used = max(0, m.tokens.used-n)
	}
}

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
		resetTokens:       m.tokens.untilNext(now),
		resetRequests:     m.req10.untilNext(now),
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
