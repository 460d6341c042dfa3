package budget_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// TestAWriteAfterTheCallIsCountedAndReturned: each write Done makes after
// a call, against a store that went away between the reservation and the
// answer, is asked again within the deadline, then counted by write and
// deployment and returned, wrapping ErrUnavailable; none vanishes.
func TestAWriteAfterTheCallIsCountedAndReturned(t *testing.T) {
	lowered := http.Header{"X-Ratelimit-Limit-Tokens": {"50000"}}
	crowded := http.Header{"X-Ratelimit-Limit-Tokens": {"100000"}, "X-Ratelimit-Remaining-Tokens": {"1000"}}
	for _, c := range []struct {
		name  string
		o     budget.Outcome
		write string
	}{
		{"not sent: the cancel", budget.Outcome{Sent: false}, budget.WriteCancel},
		{"a 429: the cancel and the shared breaker", budget.Outcome{Sent: true, Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After-Ms": {"500"}}}, budget.WriteBreaker},
		{"a lowered limit", budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60, Header: lowered}, budget.WriteLimit},
		{"use the store did not see", budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60, Header: crowded}, budget.WriteAbsorb},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, r := ownRedis(t)
			l := acquire(t, r, budget.Call{Tokens: 100})
			srv.Kill()
			ctx, cancel := context.WithTimeout(bg, 3*time.Second)
			defer cancel()
			err := l.Done(ctx, c.o)
			if !errors.Is(err, budget.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Done returned %v, want the store's error", err)
			}
			if !strings.Contains(err.Error(), c.write+" on a") {
				t.Errorf("Done's error %q does not name the %s write", err, c.write)
			}
			if n := r.Metrics().StoreWritesFailed["a"][c.write]; n != 1 {
				t.Errorf("counted %d failed %s writes, want 1 (%+v)", n, c.write, r.Metrics().StoreWritesFailed)
			}
		})
	}
}

// TestAWriteTheStoreTookIsNotCounted: with the store up, Done's writes
// return nothing and count nothing.
func TestAWriteTheStoreTookIsNotCounted(t *testing.T) {
	_, r := ownRedis(t)
	// The last fills the window: no call could be placed after it.
	for _, o := range []budget.Outcome{
		{Sent: false},
		{Sent: true, Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After-Ms": {"10"}}},
		{Sent: true, Status: http.StatusOK, UsedTokens: 60},
		{Sent: true, Status: http.StatusOK, UsedTokens: 60, Header: http.Header{"X-Ratelimit-Limit-Tokens": {"50000"}, "X-Ratelimit-Remaining-Tokens": {"1000"}}},
	} {
		l := acquire(t, r, budget.Call{Tokens: 100})
		if err := l.Done(bg, o); err != nil {
			t.Errorf("Done(%+v) = %v", o, err)
		}
		time.Sleep(20 * time.Millisecond) // past the breaker
	}
	if m := r.Metrics(); len(m.StoreWritesFailed) != 0 {
		t.Errorf("failed writes counted with the store up: %+v", m.StoreWritesFailed)
	}
}

// TestZeroValues: a Store declared as a zero value keeps its counters in
// memory with the default options; a Router no constructor made says what
// it lacks.
func TestZeroValues(t *testing.T) {
	var s budget.Store
	r, err := s.Reserve(bg, "", "a", budget.Cost{Tokens: 10}, budget.Limits{Tokens: 100, Requests: 10})
	if err != nil || s.Window() != budget.DefaultWindow {
		t.Fatalf("a zero Store: Reserve = %v, window %v", err, s.Window())
	}
	if err := s.Settle(bg, r, 5); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(bg, "a"); err != nil || u[0].Used != 5 {
		t.Errorf("a zero Store's usage after a settle of 5: %+v, %v", u, err)
	}
	var zero budget.Router
	for name, err := range map[string]error{
		"Do": func() error {
			_, _, err := zero.Do(bg, budget.Call{Tokens: 1}, func(context.Context, *budget.Lease) budget.Outcome { return budget.Outcome{} })
			return err
		}(),
		"Acquire":   func() error { _, err := zero.Acquire(bg, budget.Call{Tokens: 1}); return err }(),
		"Dashboard": func() error { _, err := zero.Dashboard(bg); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), "NewRouter") {
			t.Errorf("a zero Router's %s = %v, want an error that names NewRouter", name, err)
		}
	}
}

// TestACallGivenUpOnStillGivesItsReservationBack: Done with the caller's
// context already ended (a deadline, a SIGTERM) still writes: the room is
// the fleet's again, and nothing is counted as lost.
func TestACallGivenUpOnStillGivesItsReservationBack(t *testing.T) {
	_, r := ownRedis(t)
	l := acquire(t, r, budget.Call{Tokens: 100})
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := l.Done(ctx, budget.Outcome{Sent: false}); err != nil {
		t.Fatalf("Done after the caller gave up = %v", err)
	}
	if m := r.Metrics(); len(m.StoreWritesFailed) != 0 {
		t.Errorf("writes counted as lost: %+v", m.StoreWritesFailed)
	}
	d, err := r.Dashboard(bg)
	if err != nil {
		t.Fatal(err)
	}
	if held := d.Deployments[0].Reserved; held != 0 {
		t.Errorf("the window still holds %d tokens of the call given up on", held)
	}
}

// refusingCancels is a driver that takes every write but the cancel; its
// census counts.
type refusingCancels struct{ censusDriver }

type censusDriver interface {
	budget.Driver
	budget.Census
}

func (refusingCancels) Cancel(context.Context, budget.Reservation) error {
	return errors.New("the cancel is refused")
}

// TestDoSaysWhichWritesOfTheCallFailed: a call that took two leases (the
// first not sent by its SendBy, the second answered) returns a lease whose
// WritesFailed counts the first lease's lost cancel, as the metrics do;
// the second lease's settle, taken, tells the fleet's census of it.
func TestDoSaysWhichWritesOfTheCallFailed(t *testing.T) {
	mem := budget.NewMemDriver(budget.MemOptions{}).(censusDriver)
	r := router(t, budget.NewStore(refusingCancels{mem}), config(t, "", "a:100000"))
	sends := 0
	o, l, err := r.Do(bg, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
		sends++
		if sends == 1 {
			return budget.Outcome{Late: true, LateAt: time.Now()}
		}
		return budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60}
	})
	if err != nil || !o.OK() {
		t.Fatalf("Do = %+v, %v", o, err)
	}
	if n := l.WritesFailed(); n != 1 {
		t.Errorf("the lease Do returned says %d writes failed, want 1 (the first lease's cancel)", n)
	}
	if n := r.Metrics().StoreWritesFailed["a"][budget.WriteCancel]; n != 1 {
		t.Errorf("counted %d failed cancels, want 1", n)
	}
	d, err := r.Dashboard(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Deployments[0].FleetWritesLost; n != 1 {
		t.Errorf("the fleet's census holds %d lost writes, want the cancel", n)
	}
}
