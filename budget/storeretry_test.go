package budget_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// ownRedis is a router over a redis-server of the test's own, which it
// may stall or kill.
func ownRedis(t *testing.T) (*redistest.Server, *budget.Router) {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		t.Skipf("cannot start a redis-server of its own: %v", err)
	}
	t.Cleanup(srv.Kill)
	rdb, err := redisstore.Dial(srv.URL(), 0)
	if err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.New(bg, redisstore.Options{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return srv, router(t, store, config(t, "", "a:100000"))
}

// stall keeps the single-threaded server busy for d, as a loaded machine
// or a failover would: no client gets an answer meanwhile.
func stall(t *testing.T, srv *redistest.Server, d time.Duration) {
	t.Helper()
	other := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { other.Close() })
	go other.Eval(context.Background(), `
local s = redis.call('TIME')
while true do
  local n = redis.call('TIME')
  if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > tonumber(ARGV[1]) then break end
end
return 1`, nil, d.Microseconds())
	time.Sleep(50 * time.Millisecond) // the script is running
}

// A store that answers late is asked again inside the call, and the call
// is one call: one request sent, no retry counted.
func TestAStoreThatAnswersLateIsAskedAgainWithinTheCall(t *testing.T) {
	srv, r := ownRedis(t)
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	sent := 0
	send := func(context.Context, *budget.Lease) budget.Outcome {
		sent++
		return budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60}
	}
	// A first call reads the learned model, which the next one then does
	// without: its first round trip is the usage read.
	if _, _, err := r.Do(ctx, budget.Call{Tokens: 100}, send); err != nil {
		t.Fatal(err)
	}
	// Longer than one round trip takes to fail (its timeouts, the
	// driver's one re-send), shorter than two.
	stall(t, srv, 2*time.Second)
	start := time.Now()
	_, l, err := r.Do(ctx, budget.Call{Tokens: 100}, send)
	if err != nil {
		t.Fatalf("a store that answered within its tries failed the call: %v", err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the call took %v: the store cannot have stalled it", took)
	}
	m := r.Metrics.Snapshot()
	if sent != 2 || l.Deployment.Name != "a" || m.Calls != 2 || m.Retries != 0 || m.Completed != 2 {
		t.Errorf("sent %d, metrics %+v: want two calls, each sent once, no retry", sent, m)
	}
}

// A store that does not answer at all fails the call, within a bound and
// within its deadline, with the store's error; nothing is sent.
func TestAStoreThatIsGoneFailsTheCallInBoundedTime(t *testing.T) {
	srv, r := ownRedis(t)
	srv.Kill()
	send := func(context.Context, *budget.Lease) budget.Outcome {
		t.Error("a call was sent with no reservation")
		return budget.Outcome{}
	}
	for _, deadline := range []time.Duration{10 * time.Second, 120 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(bg, deadline)
		start := time.Now()
		_, _, err := r.Do(ctx, budget.Call{Tokens: 100}, send)
		took := time.Since(start)
		cancel()
		// The store's error; or the deadline's, when it came first.
		if !errors.Is(err, budget.ErrUnavailable) && !(deadline < time.Second && errors.Is(err, context.DeadlineExceeded)) {
			t.Errorf("deadline %v: err %v, want the store's, wrapping ErrUnavailable", deadline, err)
		}
		// Four tries, 350 ms of waits between: a refused connection fails
		// at once, so well under the bound of four timeouts.
		if bound := min(deadline, 4*redisstore.DefaultTimeout+350*time.Millisecond) + time.Second; took > bound {
			t.Errorf("deadline %v: failing took %v, past %v", deadline, took, bound)
		}
	}
	if m := r.Metrics.Snapshot(); m.Calls != 2 || m.Failed != 2 || m.Retries != 0 {
		t.Errorf("metrics %+v: want two calls, both failed, no retry", m)
	}
}
