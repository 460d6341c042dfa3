package budget_test

import (
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/storetest"
)

type memHarness struct{}

func (memHarness) MakeStore(t *testing.T, window time.Duration, policy budget.Policy) budget.Store {
	return budget.NewMemStore(budget.MemOptions{Window: window, Policy: policy})
}

func (memHarness) Reopen(t *testing.T, s budget.Store) budget.Store { return s }

func (memHarness) Footprint(t *testing.T, s budget.Store, deployment string) int {
	return s.(*budget.MemStore).Footprint(deployment)
}

func TestMemStoreConformance(t *testing.T) {
	storetest.RunConformanceTests(t, memHarness{})
}

func BenchmarkMemStoreReserveSettle(b *testing.B) {
	storetest.BenchmarkReserveSettle(b, budget.NewMemStore(budget.MemOptions{}))
}
