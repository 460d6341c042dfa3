package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/storetest"
	"github.com/headroom-agent/headroom/internal/redistest"
)

type harness struct{ url string }

func (h harness) open(t *testing.T, prefix string, window time.Duration, policy budget.Policy) *Driver {
	t.Helper()
	rdb, err := Dial(h.url, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewDriver(context.Background(), Options{Client: rdb, Prefix: prefix, Window: window, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (h harness) MakeDriver(t *testing.T, window time.Duration, policy budget.Policy) budget.Driver {
	return h.open(t, "test:"+budget.NewID(), window, policy)
}

func (h harness) Reopen(t *testing.T, d budget.Driver) budget.Driver {
	rs := d.(*Driver)
	return h.open(t, rs.prefix, rs.window, rs.policy)
}

func (h harness) Footprint(t *testing.T, d budget.Driver, deployment string) int {
	n, err := d.(*Driver).Footprint(context.Background(), deployment)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConformance(t *testing.T) {
	storetest.RunConformanceTests(t, harness{url: redistest.URL(t)})
}

// BenchmarkReserveSettle runs reserve+settle cycles from GOMAXPROCS×p
// goroutines (go test -bench . -cpu 1,8,32 for 1/16/64 clients on 2 cores).
func BenchmarkReserveSettle(b *testing.B) {
	url := redistest.URL(b)
	rdb, err := Dial(url, 64)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(context.Background(), Options{Client: rdb, Prefix: "bench:" + budget.NewID(), Window: 6 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchmarkReserveSettle(b, s)
}

// ReserveCall takes Reserve's arguments in Reserve's order, and the script
// it lays out reserves what Reserve would.
func TestReserveCallIsReserve(t *testing.T) {
	h := harness{url: redistest.URL(t)}
	s := h.open(t, "test:"+budget.NewID(), time.Minute, budget.Hold)
	ctx := context.Background()
	lim := budget.Limits{Tokens: 100000, Requests: 600}
	if _, err := s.Reserve(ctx, "r1", "d", budget.Cost{Tokens: 300}, lim); err != nil {
		t.Fatal(err)
	}
	sha, keys, args := s.ReserveCall("r2", "d", budget.Cost{Tokens: 200}, lim)
	argv := make([]any, len(args))
	for i, a := range args {
		argv[i] = a
	}
	if err := s.rdb.EvalSha(ctx, sha, keys, argv...).Err(); err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 1 || u[0].Reserved != 500 {
		t.Errorf("usage %+v, want 500 tokens reserved by Reserve and the script together", u)
	}
}
