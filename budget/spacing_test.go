package budget_test

import (
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

func TestPacedSpacingAllowsForLagOncePerWindow(t *testing.T) {
	lim := budget.Limits{Tokens: 1000000, Requests: 600} // 10 per second, 100 per ten
	// (1 s + 100 ms) / 10, stretched 1%.
	if got, want := lim.PacedSpacing(time.Minute, 0.01, 100*time.Millisecond), 111100*time.Microsecond; got != want {
		t.Errorf("spacing %v, want %v", got, want)
	}
	// The fixed model adds its jitter to every interval.
	if got, want := lim.RequestSpacing(time.Minute, 0.01, 5*time.Millisecond), 106*time.Millisecond; got != want {
		t.Errorf("fixed spacing %v, want %v", got, want)
	}
}
