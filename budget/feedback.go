package budget

import (
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
// x-ms-retry-after-ms), else retry-after in seconds or as an HTTP date;
// 0 when none is usable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	for _, n := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
				return time.Duration(ms * float64(time.Millisecond))
			}
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
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

// Classify names the cause of a 429 from its headers: a token limit below
// the configured one is an adjustment; no room left for the call's tokens
// is tokens; no request left is requests.
func Classify(fb Feedback, configuredTPM, cost int64) Cause {
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
