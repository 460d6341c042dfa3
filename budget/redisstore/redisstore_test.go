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

func (h harness) open(t *testing.T, prefix string, window time.Duration, policy budget.Policy) *Store {
	t.Helper()
	rdb, err := Dial(h.url, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), Options{Client: rdb, Prefix: prefix, Window: window, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (h harness) MakeStore(t *testing.T, window time.Duration, policy budget.Policy) budget.Store {
	return h.open(t, "test:"+budget.NewID(), window, policy)
}

func (h harness) Reopen(t *testing.T, s budget.Store) budget.Store {
	rs := s.(*Store)
	return h.open(t, rs.prefix, rs.window, rs.policy)
}

func (h harness) Footprint(t *testing.T, s budget.Store, deployment string) int {
	n, err := s.(*Store).Footprint(context.Background(), deployment)
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
