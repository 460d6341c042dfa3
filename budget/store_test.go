package budget_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/headroom-agent/headroom/budget"
)

// stalling is a driver whose first stalls round trips of Reserve and
// Settle do not answer in time, and whose settles are then queued, as the
// Redis driver's are; it records the id of every Reserve it is asked.
type stalling struct {
	budget.Driver
	mu     sync.Mutex
	stalls int
	ids    []string
}

var errStalled = &budget.StoreError{Op: "reserve", Err: context.DeadlineExceeded}

func (d *stalling) stalled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stalls > 0 {
		d.stalls--
		return true
	}
	return false
}

func (d *stalling) Reserve(ctx context.Context, id, dep string, c budget.Cost, l budget.Limits) (budget.Reservation, error) {
	d.mu.Lock()
	d.ids = append(d.ids, id)
	d.mu.Unlock()
	if d.stalled() {
		return budget.Reservation{}, errStalled
	}
	return d.Driver.Reserve(ctx, id, dep, c, l)
}

func (d *stalling) Settle(ctx context.Context, r budget.Reservation, used int64) error {
	if d.stalled() {
		return &budget.StoreError{Op: "settle", Err: context.DeadlineExceeded, Queued: true}
	}
	return d.Driver.Settle(ctx, r, used)
}

// TestStoreAsksAgainWithTheSameID: a driver that does not answer is asked
// again by the Store, never by the driver, with the id of the first ask,
// so an ask that went through unseen is not charged twice; a write the
// driver queued is not asked again. Stats counts both.
func TestStoreAsksAgainWithTheSameID(t *testing.T) {
	d := &stalling{Driver: budget.NewMemDriver(budget.MemOptions{}), stalls: 2}
	s := budget.NewStore(d)
	r, err := s.Reserve(bg, "", "a", budget.Cost{Tokens: 10}, budget.Limits{Tokens: 1000, Requests: 600})
	if err != nil {
		t.Fatalf("Reserve after two stalls = %v", err)
	}
	if len(d.ids) != 3 || d.ids[0] == "" || d.ids[1] != d.ids[0] || d.ids[2] != d.ids[0] || r.ID != d.ids[0] {
		t.Errorf("the driver was asked with ids %q and admitted %q, want one id three times", d.ids, r.ID)
	}
	d.stalls = 1
	if err := s.Settle(bg, r, 5); !errors.Is(err, budget.ErrUnavailable) {
		t.Errorf("a queued settle = %v, want the driver's StoreError", err)
	}
	want := map[string]budget.StoreOpStats{
		"reserve": {Calls: 1, AskedAgain: 2},
		"settle":  {Calls: 1, Unavailable: 1, Queued: 1},
	}
	got := s.Stats()
	for op, w := range want {
		if got[op] != w {
			t.Errorf("Stats()[%s] = %+v, want %+v", op, got[op], w)
		}
	}
}

// TestNewStoreWantsADriver: a Store made over nothing fails at once, where
// it is made, not at its first call.
func TestNewStoreWantsADriver(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewStore(nil) returned a store")
		}
	}()
	budget.NewStore(nil)
}
