package budget

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Feedback is what a response's headers say about a deployment. Azure's
// rate-limit headers are under-documented and inconsistent (missing on some
// APIs, -1 on others, hyphenated differently), so every field may be
// unknown: -1 for the counts, 0 for RetryAfter.
type Feedback struct {
	LimitTokens       int64
	RemainingTokens   int64
	LimitRequests     int64
	RemainingRequests int64
	RetryAfter        time.Duration
}

// header names, the documented spelling first, then the ones seen in the
// wild.
var (
	limitTokens       = []string{"x-ratelimit-limit-tokens", "x-rate-limit-limit-tokens"}
	remainingTokens   = []string{"x-ratelimit-remaining-tokens", "x-rate-limit-remaining-tokens"}
	limitRequests     = []string{"x-ratelimit-limit-requests", "x-rate-limit-limit-requests"}
	remainingRequests = []string{"x-ratelimit-remaining-requests", "x-rate-limit-remaining-requests"}
)

// ParseFeedback reads h defensively; now resolves an HTTP-date Retry-After.
func ParseFeedback(h http.Header, now time.Time) Feedback {
	return Feedback{
		LimitTokens:       count(h, limitTokens),
		RemainingTokens:   count(h, remainingTokens),
		LimitRequests:     count(h, limitRequests),
		RemainingRequests: count(h, remainingRequests),
		RetryAfter:        RetryAfter(h, now),
	}
}

// count is the first usable value of names: a whole, non-negative number
// ("-1" and garbage mean unknown).
func count(h http.Header, names []string) int64 {
	for _, n := range names {
		v := strings.TrimSpace(h.Get(n))
		if v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f > 1<<53 {
			continue
		}
		return int64(f)
	}
	return -1
}

// RetryAfter is how long h asks the caller to wait: retry-after-ms (or
// x-ms-retry-after-ms), else retry-after in seconds or as an HTTP date,
// relative to now; 0 when it asks nothing usable. A wait longer than a Duration holds (an
// HTTP date in the year 9999, "1e400") is the longest Duration, never one
// that wraps around.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	return askedWait(h, now).Duration()
}

// Wait is what an answer's headers ask a caller to wait before it asks
// again, as they said it: Seconds may be far past what a Duration holds
// (+Inf for a number too large for a float64), and Header names the one
// it came from.
type Wait struct {
	Seconds float64
	Header  string
}

// askedWait reads retry-after-ms (or x-ms-retry-after-ms), else
// retry-after in seconds or as an HTTP date, relative to now. What no
// server means (a negative number, NaN, a date already past, text) is no
// wait: the zero Wait.
func askedWait(h http.Header, now time.Time) Wait {
	for _, n := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms, ok := seconds(h.Get(n)); ok && ms > 0 {
			return Wait{Seconds: ms / 1000, Header: n}
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if s, ok := seconds(v); ok {
		if s > 0 {
			return Wait{Seconds: s, Header: "Retry-After"}
		}
		return Wait{}
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		// In seconds first: a date centuries away is past what a
		// Duration between two times can hold.
		return Wait{Seconds: float64(t.Unix()-now.Unix()) + float64(t.Nanosecond()-now.Nanosecond())/1e9, Header: "Retry-After"}
	}
	return Wait{}
}

// seconds reads a header's number; one too large for a float64 is +Inf.
func seconds(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	var ne *strconv.NumError
	if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// Duration is the wait as a Duration: the longest one for a wait past
// what a Duration holds, 0 for none.
func (w Wait) Duration() time.Duration {
	switch {
	case !(w.Seconds > 0):
		return 0
	case w.Seconds >= float64(math.MaxInt64)/float64(time.Second):
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(w.Seconds * float64(time.Second))
}

// String says the wait as a person reads it: "7 s", "2.5e+11 s".
func (w Wait) String() string {
	if math.IsInf(w.Seconds, 1) {
		return "longer than a number holds"
	}
	return strconv.FormatFloat(w.Seconds, 'g', 3, 64) + " s"
}

// Cause is why Azure refused a call. The three known causes have three
// different fixes: tokens (smaller caps, more quota), requests (spread the
// calls), adjustment (the service lowered the limit for a while: wait).
type Cause string

const (
	CauseTokens     Cause = "tokens"
	CauseRequests   Cause = "requests"
	CauseAdjustment Cause = "adjustment"
	CauseUnknown    Cause = "unknown"
)

// classify names the cause of a 429 from its headers: a token limit below
// the configured one is an adjustment; no room left for the call's tokens
// is tokens; no request left is requests.
func classify(fb Feedback, configuredTPM, cost int64) Cause {
	switch {
	case fb.LimitTokens > 0 && fb.LimitTokens < configuredTPM:
		return CauseAdjustment
	case fb.RemainingTokens >= 0 && fb.RemainingTokens < max(1, cost):
		return CauseTokens
	case fb.RemainingRequests == 0:
		return CauseRequests
	}
	return CauseUnknown
}
