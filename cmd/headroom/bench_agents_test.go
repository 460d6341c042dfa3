package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/bench/agents"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// Real agents, each a headroom run with its own Chromium, on replayed
// tasks against deployments too small for all of them at once: with the
// shared store every task completes and the simulator sends no 429.
func TestBenchAgentsShareOneBudget(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	plot := filepath.Join(t.TempDir(), "agents.svg")
	r := runBinary(t, nil, "bench", "agents", "--agents", "3", "--redis", url, "--tasks", "../../testdata/tasks/fleet.yaml", "--plot", plot, "--json")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var rows []agents.Row
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("stdout is not rows: %v\n%s", err, r.stdout)
	}
	by := map[string]agents.Row{}
	for _, row := range rows {
		by[row.Budget] = row
	}
	shared, per := by[agents.Shared], by[agents.PerProcess]
	if len(rows) != 2 || shared.Agents != 3 || per.Agents != 3 {
		t.Fatalf("want a row of 3 agents per budget mode, got %s", r.stdout)
	}
	t.Logf("shared: %d/%d succeeded, %d 429s, wall %.1f s, floor %.1f s; per-process: %d/%d, %d 429s (%v)",
		shared.Succeeded, shared.Agents, shared.RateLimited, shared.WallS, shared.FloorS, per.Succeeded, per.Agents, per.RateLimited, per.RateLimitedByCause)
	if shared.Succeeded != shared.Agents {
		t.Errorf("shared store: %d of %d tasks succeeded: %v", shared.Succeeded, shared.Agents, shared.Failures)
	}
	for _, row := range rows {
		if row.Verified+row.Judged != row.Succeeded {
			t.Errorf("%s: %d verified + %d judged, but %d succeeded", row.Budget, row.Verified, row.Judged, row.Succeeded)
		}
	}
	if shared.RateLimited != 0 || shared.AgentsRateLimited != 0 {
		t.Errorf("shared store: the simulator sent %d 429s (%v), the agents met %d; want none", shared.RateLimited, shared.RateLimitedByCause, shared.AgentsRateLimited)
	}
	// The deployments are sized so the agents need more than one window:
	// a bench whose demand fits at once measures nothing.
	if shared.TokensReserved <= shared.Allowance || shared.FloorS <= 0 {
		t.Errorf("the agents reserved %d tokens against an allowance of %d a window: no contention", shared.TokensReserved, shared.Allowance)
	}
	if shared.WallS < shared.FloorS {
		t.Errorf("wall %.1f s is under the budget's floor of %.1f s: the floor is wrong", shared.WallS, shared.FloorS)
	}
	if shared.StepOverheadMSP50 <= 0 || shared.PeakRSSMB <= 0 || shared.ChromePeakRSSMB <= 0 {
		t.Errorf("step overhead %.0f ms, peak %.0f MB (Chrome %.0f MB): not measured", shared.StepOverheadMSP50, shared.PeakRSSMB, shared.ChromePeakRSSMB)
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !strings.Contains(string(svg), "shared budget") || !strings.Contains(string(svg), "per-process budget") {
		t.Errorf("--plot: %v: want a panel per budget mode", err)
	}
}
