package budget_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// farFuture is the Retry-After a hostile or broken endpoint sent.
const farFuture = "Fri, 31 Dec 9999 23:59:59 GMT"

func TestAskedWaitReadsWhatAServerCanSay(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, value string
		want        time.Duration
		header      string
	}{
		{"Retry-After", "7", 7 * time.Second, "Retry-After"},
		{"Retry-After-Ms", "1500", 1500 * time.Millisecond, "retry-after-ms"},
		{"Retry-After", now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, "Retry-After"},
		// Past what a Duration holds: the longest one, never a wrap-around
		// to a short or negative wait.
		{"Retry-After", farFuture, math.MaxInt64, "Retry-After"},
		{"Retry-After", "1e400", math.MaxInt64, "Retry-After"},
		{"Retry-After-Ms", "9e18", math.MaxInt64, "retry-after-ms"},
		{"Retry-After", "Inf", math.MaxInt64, "Retry-After"},
		// What no server means is no wait.
		{"Retry-After", "-5", 0, ""},
		{"Retry-After", "NaN", 0, ""},
		{"Retry-After-Ms", "-1e400", 0, ""},
		{"Retry-After", "Mon, 01 Jan 1990 00:00:00 GMT", 0, ""},
		{"Retry-After", "soon", 0, ""},
	} {
		h := http.Header{c.name: {c.value}}
		w := budget.AskedWait(h, now)
		if got := w.Duration(); got != c.want || w.Header != c.header || got < 0 {
			t.Errorf("%s: %s: %v from %q, want %v from %q", c.name, c.value, got, w.Header, c.want, c.header)
		}
		if got := budget.RetryAfter(h, now); got != c.want {
			t.Errorf("RetryAfter(%s: %s) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
	if w := budget.AskedWait(http.Header{"Retry-After": {farFuture}}, now); w.Seconds < 2.5e11 || w.String() != "2.52e+11 s" {
		t.Errorf("the year 9999 is %v (%s) away", w.Seconds, w)
	}
}
