package budget_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
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
	return srv, router(t, openStore(t, srv), config(t, "", "a:100000"))
}

// openStore opens a store on srv, closed when the test ends.
func openStore(t *testing.T, srv *redistest.Server) *budget.Store {
	t.Helper()
	rdb, err := redisstore.Dial(srv.URL(), 0)
	if err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.New(bg, redisstore.Options{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
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
	m := r.Metrics()
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
	if m := r.Metrics(); m.Calls != 2 || m.Failed != 2 || m.Retries != 0 {
		t.Errorf("metrics %+v: want two calls, both failed, no retry", m)
	}
}

// stallFor pauses the server for d, longer than a round trip's timeouts
// and the driver's re-send many times over, then resumes it.
func stallFor(t *testing.T, srv *redistest.Server, d time.Duration) {
	t.Helper()
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Resume() })
	time.AfterFunc(d, func() { _ = srv.Resume() })
}

// settled says whether every token the deployment holds was settled,
// once each of stores has sent what it queued: no settle was lost to the
// stall.
func settled(t *testing.T, deployment string, stores ...*budget.Store) {
	t.Helper()
	for _, s := range stores {
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
	}
	us, err := stores[0].Usage(bg, deployment)
	if err != nil {
		t.Fatal(err)
	}
	if u := us[0]; u.Reserved != u.Settled || u.Reserved == 0 {
		t.Errorf("%s holds %d tokens with %d settled: a settle was lost", deployment, u.Reserved, u.Settled)
	}
}

// Twenty calls that open the store (loading its scripts) while Redis
// stalls for five seconds all go through once it is back: the stall
// costs them time, not the calls.
func TestAFiveSecondStallAtStartUpLosesNoCall(t *testing.T) {
	srv, err := redistest.Start()
	if err != nil {
		t.Skipf("cannot start a redis-server of its own: %v", err)
	}
	t.Cleanup(srv.Kill)
	cfg := config(t, "", "a:600000")
	stallFor(t, srv, 5*time.Second)
	var wg sync.WaitGroup
	var sent atomic.Int64
	stores := make([]*budget.Store, 20)
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(bg, 30*time.Second)
			defer cancel()
			rdb, err := redisstore.Dial(srv.URL(), 0)
			if err != nil {
				errs[i] = err
				return
			}
			store, err := redisstore.New(ctx, redisstore.Options{Client: rdb})
			if err != nil {
				errs[i] = err
				rdb.Close()
				return
			}
			stores[i] = store
			_, _, errs[i] = router(t, store, cfg).Do(ctx, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
				sent.Add(1)
				return budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60}
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if sent.Load() != 20 {
		t.Errorf("%d calls sent, want 20, each once", sent.Load())
	}
	stores = slices.DeleteFunc(stores, func(s *budget.Store) bool { return s == nil })
	if len(stores) > 0 {
		settled(t, "a", stores...)
	}
	for _, s := range stores {
		s.Close()
	}
}

// Twenty calls on an open store, reserved just before Redis stalls for
// five seconds, settle during the stall, and twenty more reserve during
// it: every call goes through, none is charged twice, and no settle is
// lost.
func TestAFiveSecondStallMidCallLosesNoCall(t *testing.T) {
	srv, _ := ownRedis(t)
	store := openStore(t, srv)
	r := router(t, store, config(t, "", "a:600000"))
	var sent atomic.Int64
	reserved := make(chan struct{}, 20)
	stalled := make(chan struct{})
	send := func(context.Context, *budget.Lease) budget.Outcome {
		sent.Add(1)
		select {
		case reserved <- struct{}{}:
			<-stalled // in flight while the store stalls: settled during it
		default:
		}
		return budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 60}
	}
	var wg sync.WaitGroup
	errs := make([]error, 40)
	call := func(i int) {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		_, _, errs[i] = r.Do(ctx, budget.Call{Tokens: 100}, send)
	}
	for i := range 20 {
		wg.Go(func() { call(i) })
	}
	for range 20 {
		<-reserved
	}
	stallFor(t, srv, 5*time.Second)
	close(stalled)
	for i := 20; i < 40; i++ {
		wg.Go(func() { call(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	m := r.Metrics()
	if sent.Load() != 40 || m.Calls != 40 || m.Completed != 40 || m.Retries != 0 {
		t.Errorf("sent %d, metrics %+v: want 40 calls, each sent once", sent.Load(), m)
	}
	settled(t, "a", store)
}

// A store that stalls and never comes back fails the calls with its
// error once their deadline is near, not before: nothing is sent.
func TestAStoreThatStaysStalledFailsTheCallAtItsDeadline(t *testing.T) {
	srv, r := ownRedis(t)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(bg, 3*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := r.Do(ctx, budget.Call{Tokens: 100}, func(context.Context, *budget.Lease) budget.Outcome {
		t.Error("a call was sent with no reservation")
		return budget.Outcome{}
	})
	took := time.Since(start)
	if !errors.Is(err, budget.ErrUnavailable) {
		t.Errorf("err %v, want the store's, wrapping ErrUnavailable", err)
	}
	// It asked until the last wait would pass the deadline: within a
	// second and a round trip of it.
	if took < 3*time.Second-maxStoreWait-time.Second || took > 3*time.Second+time.Second {
		t.Errorf("failing took %v with a 3 s deadline", took)
	}
}

const maxStoreWait = time.Second // the router's longest wait between asks
