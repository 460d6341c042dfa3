package budget_test

import (
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/storetest"
)

type memHarness struct{}

func (memHarness) MakeDriver(t *testing.T, window time.Duration, policy budget.Policy) budget.Driver {
	return budget.NewMemDriver(budget.MemOptions{Window: window, Policy: policy})
}

// Reopen is the same driver: a second process has a memory of its own.
func (memHarness) Reopen(t *testing.T, d budget.Driver) budget.Driver { return d }

func (memHarness) Footprint(t *testing.T, d budget.Driver, deployment string) int {
	return budget.MemFootprint(d, deployment)
}

func TestMemStoreConformance(t *testing.T) {
	storetest.RunConformanceTests(t, memHarness{})
}

func BenchmarkMemStoreReserveSettle(b *testing.B) {
	storetest.BenchmarkReserveSettle(b, budget.NewMemStore(budget.MemOptions{}))
}
