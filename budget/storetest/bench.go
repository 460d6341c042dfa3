package storetest

import (
	"context"
	"testing"

	"github.com/headroom-agent/headroom/budget"
)

// BenchmarkReserveSettle measures reserve+settle cycles on one deployment
// from parallel goroutines; limits never bind.
func BenchmarkReserveSettle(b *testing.B, s *budget.Store) {
	lim := budget.Limits{Tokens: 1 << 50, Requests: 1 << 50, Margin: 1}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := s.Reserve(ctx, "", "bench", budget.Cost{Tokens: 200}, lim)
			if err != nil {
				b.Error(err)
				return
			}
			if err := s.Settle(ctx, r, 120); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
