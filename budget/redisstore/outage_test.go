package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redistest"
)

func ownServer(t *testing.T) (*redistest.Server, *Driver) {
	t.Helper()
	srv, err := redistest.Start()
	if err != nil {
		t.Skipf("cannot start a redis-server of its own: %v", err)
	}
	t.Cleanup(srv.Kill)
	rdb, err := Dial(srv.URL(), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewDriver(context.Background(), Options{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return srv, s
}

// unavailable asserts that every call fails fast with the typed error.
func unavailable(t *testing.T, s *Driver, r budget.Reservation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lim := budget.Limits{Tokens: 1000, Requests: 600}
	start := time.Now()
	_, err := s.Reserve(ctx, budget.NewID(), "d", budget.Cost{Tokens: 1}, lim)
	var se *budget.StoreError
	if !errors.Is(err, budget.ErrUnavailable) || !errors.As(err, &se) || se.Op != "reserve" {
		t.Errorf("Reserve with Redis gone = %v, want a StoreError wrapping ErrUnavailable", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Reserve took %v to fail", took)
	}
	for name, err := range map[string]error{
		"settle": s.Settle(ctx, r, 1),
		"cancel": s.Cancel(ctx, r),
		"usage":  func() error { _, err := s.Usage(ctx, "d", "e"); return err }(),
		"breaker": func() error {
			_, err := s.OpenBreaker(ctx, "d", time.Second)
			return err
		}(),
		"effective limit": s.SetEffectiveLimit(ctx, "d", 10, time.Second),
		"flush":           s.Flush(ctx),
	} {
		if !errors.Is(err, budget.ErrUnavailable) {
			t.Errorf("%s with Redis gone = %v", name, err)
		}
	}
	if ctx.Err() != nil {
		t.Errorf("the calls used up the caller's deadline: the store hangs")
	}
}

func TestRedisKilledMidRun(t *testing.T) {
	srv, s := ownServer(t)
	r, err := s.Reserve(context.Background(), budget.NewID(), "d", budget.Cost{Tokens: 1}, budget.Limits{Tokens: 1000, Requests: 600})
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	unavailable(t, s, r)
}

func TestRedisTooSlowIsUnavailable(t *testing.T) {
	srv, s := ownServer(t)
	r, err := s.Reserve(context.Background(), budget.NewID(), "d", budget.Cost{Tokens: 1}, budget.Limits{Tokens: 1000, Requests: 600})
	if err != nil {
		t.Fatal(err)
	}
	// Another client stalls the single-threaded server with a script that
	// spins for a second and a half.
	other := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 5 * time.Second})
	defer other.Close()
	go other.Eval(context.Background(), `
local s = redis.call('TIME')
while true do
  local n = redis.call('TIME')
  if (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 1500000 then break end
end
return 1`, nil)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	_, err = s.Reserve(context.Background(), budget.NewID(), "d", budget.Cost{Tokens: 1}, budget.Limits{Tokens: 1000, Requests: 600})
	if !errors.Is(err, budget.ErrUnavailable) {
		t.Errorf("Reserve on a stalled server = %v", err)
	}
	if took := time.Since(start); took > 4*DefaultTimeout {
		t.Errorf("Reserve took %v on a stalled server; the bound is about %v", took, 2*DefaultTimeout)
	}
	_ = r
}

func TestScriptCacheFlushed(t *testing.T) {
	srv, s := ownServer(t)
	other := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer other.Close()
	if err := other.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Usage(context.Background(), "d"); err != nil {
		t.Errorf("Usage after SCRIPT FLUSH: %v", err)
	}
	other.ScriptFlush(context.Background())
	if _, err := s.Reserve(context.Background(), budget.NewID(), "d", budget.Cost{Tokens: 1}, budget.Limits{Tokens: 1000, Requests: 600}); err != nil {
		t.Errorf("Reserve after SCRIPT FLUSH: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	_, err := Dial("redis://user:hunter2@host:6379/notadb", 0)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Dial error %v shows the password", err)
	}
}

// TestCloseReportsTheSettlesItCouldNotSend: a settle is queued, not
// waited for; with Redis gone, Flush and Close return it, wrapping
// ErrUnavailable, instead of dropping it.
func TestCloseReportsTheSettlesItCouldNotSend(t *testing.T) {
	srv, s := ownServer(t)
	ctx := context.Background()
	r, err := s.Reserve(ctx, budget.NewID(), "d", budget.Cost{Tokens: 10}, budget.Limits{Tokens: 1000, Requests: 600})
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := s.Settle(ctx, r, 5); err != nil {
		var se *budget.StoreError
		if !errors.As(err, &se) || !se.Queued {
			t.Fatalf("Settle with Redis gone = %v, want nil or a StoreError saying it is queued", err)
		}
	}
	err = s.Close()
	if !errors.Is(err, budget.ErrUnavailable) || !strings.Contains(err.Error(), "settle") {
		t.Errorf("Close with a settle unsent = %v, want a StoreError naming it", err)
	}
}
