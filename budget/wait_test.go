package budget_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
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

// A 429 asking for a wait past the call's deadline fails the call at once,
// saying so: the call neither sleeps towards the year 9999 nor waits for a
// deadline it cannot make.
func TestA429AskingPastTheDeadlineFailsAtOnce(t *testing.T) {
	for _, c := range []struct {
		name, header, value string
		deadline            time.Duration // 0: none
		want                string
	}{
		{"a date", "Retry-After", farFuture, 30 * time.Second, "d1 asked to wait 2.52e+11 s (Retry-After), past the call's deadline, 30 s away"},
		{"a number", "Retry-After-Ms", "1e400", 30 * time.Second, "d1 asked to wait longer than a number holds (retry-after-ms), past the call's deadline"},
		{"no deadline", "Retry-After", farFuture, 0, "longer than a call with no deadline waits (10m0s)"},
		{"an hour, no deadline", "Retry-After", "3600", 0, "d1 asked to wait 3.6e+03 s (Retry-After)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memStore()
			r := router(t, store, config(t, "", "d1:100000"))
			ctx := context.Background()
			if c.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.deadline)
				defer cancel()
			}
			sent := 0
			type result struct {
				err  error
				took time.Duration
			}
			done := make(chan result, 1)
			go func() {
				began := time.Now()
				_, _, err := r.Do(ctx, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
					sent++
					return budget.Outcome{Sent: true, Status: http.StatusTooManyRequests, Header: http.Header{c.header: {c.value}}}
				})
				done <- result{err, time.Since(began)}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("the call still waits a minute after a 429 asking for %s: %s", c.header, c.value)
			}
			var ce *budget.CallError
			if !errors.Is(res.err, budget.ErrShed) || !errors.As(res.err, &ce) || ce.Status != 429 || !strings.Contains(res.err.Error(), c.want) {
				t.Errorf("after %v: %v\nwant a call error for the 429 that wraps ErrShed and says %q", res.took, res.err, c.want)
			}
			if sent != 1 {
				t.Errorf("sent %d times: a wait past the deadline is not waited for", sent)
			}
			// The fleet's breaker is open, but not for centuries: one call
			// every MaxBreakerWait asks again.
			us, err := store.Usage(bg, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if open := us[0].OpenUntil.Sub(us[0].Now); open <= 0 || open > budget.MaxBreakerWait {
				t.Errorf("the breaker is open for %v, want (0, %v]", open, budget.MaxBreakerWait)
			}
		})
	}
}

// A far Retry-After on one deployment moves the call to another at once,
// and a sane one still holds its deployment's breaker open for the fleet
// for as long as it asked.
func TestAFarRetryAfterMovesOnAndASaneOneStillOpensTheBreaker(t *testing.T) {
	store := memStore()
	r := router(t, store, config(t, "", "a:100000", "b:100000"))
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	var seen []string
	_, l, err := r.Do(ctx, budget.Call{Tokens: 100}, func(_ context.Context, l *budget.Lease) budget.Outcome {
		seen = append(seen, l.Deployment.Name)
		if len(seen) == 1 {
			return budget.Outcome{Sent: true, Status: 429, Header: http.Header{"Retry-After": {farFuture}}}
		}
		return budget.Outcome{Sent: true, Status: 200, UsedTokens: 50}
	})
	if err != nil || len(seen) != 2 || seen[0] == seen[1] || l.Deployment.Name != seen[1] {
		t.Fatalf("a far 429, then another deployment: %v, tried %v", err, seen)
	}

	_, _, err = r.Do(ctx, budget.Call{Tokens: 100}, func(_ context.Context, l *budget.Lease) budget.Outcome {
		return budget.Outcome{Sent: true, Status: 429, Header: http.Header{"Retry-After": {"20"}}}
	})
	if err == nil {
		t.Fatal("every deployment answered 429 and the call succeeded")
	}
	us, err := store.Usage(bg, l.Deployment.Name)
	if err != nil {
		t.Fatal(err)
	}
	if open := us[0].OpenUntil.Sub(us[0].Now); open < 15*time.Second || open > 20*time.Second {
		t.Errorf("%s's breaker is open for %v after a Retry-After of 20 s", l.Deployment.Name, open)
	}
}

// A 2xx answer its sender could not read (a proxy's page, a body cut
// short) is no success: the call fails, is not sent again, and keeps its
// charge, as Azure may have counted it.
func TestA2xxThatCouldNotBeReadFailsTheCall(t *testing.T) {
	store := memStore()
	r := router(t, store, config(t, "", "a:100000", "b:100000"))
	bad := errors.New("the answer is an HTML page")
	if (budget.Outcome{Sent: true, Status: 200, Err: bad}).OK() {
		t.Error("a 200 with an error is OK")
	}
	sent := 0
	_, _, err := r.Do(bg, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
		sent++
		return budget.Outcome{Sent: true, Status: 200, Err: bad}
	})
	var ce *budget.CallError
	if !errors.As(err, &ce) || ce.Status != 200 || !errors.Is(err, bad) || sent != 1 {
		t.Fatalf("a 200 that could not be read, sent %d time(s): %v", sent, err)
	}
	us, err := store.Usage(bg, ce.Deployment)
	if err != nil {
		t.Fatal(err)
	}
	if us[0].Reserved != 100 {
		t.Errorf("%s holds %d tokens after the unread answer, want its 100 kept", ce.Deployment, us[0].Reserved)
	}
	if m := r.Metrics(); m.Completed != 0 || m.Failed != 1 {
		t.Errorf("metrics %+v: want the call failed, none completed", m)
	}
}

// A usage field claiming less than nothing gives no room back.
func TestANegativeUseSettlesAsNone(t *testing.T) {
	store := budget.NewMemStore(budget.MemOptions{Policy: budget.Refund})
	r := router(t, store, config(t, "", "a:100000"))
	store.Absorb(bg, "a", 5000, 0) // another caller's use
	_, _, err := r.Do(bg, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
		return budget.Outcome{Sent: true, Status: 200, UsedTokens: -1_000_000}
	})
	if err != nil {
		t.Fatal(err)
	}
	us, _ := store.Usage(bg, "a")
	if us[0].Reserved < 5000 {
		t.Errorf("reserved %d after an answer claiming -1,000,000 tokens used: others' room was given back", us[0].Reserved)
	}
}
