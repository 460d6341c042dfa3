package main

import (
	"encoding/json"
	"testing"

	"github.com/headroom-agent/headroom/bench/coldstart"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// Separate headroom call processes started at once against sliding
// request windows and a server that counts calls late: the learned
// pacing draws no 429, and every call is answered in both modes.
func TestBenchColdstart(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	r := runBinary(t, nil, "bench", "coldstart", "--processes", "40", "--redis", url, "--json")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var rows []coldstart.Row
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("stdout is not two rows: %v\n%s", err, r.stdout)
	}
	for _, row := range rows {
		t.Logf("%s: %d/%d answered, %d 429s (%v), %d calls met one, wall %d ms (floor %d), allowance %v",
			row.Mode, row.Succeeded, row.Processes, row.RateLimited, row.RateLimitedBy, row.CallsRateLimited, row.WallMS, row.FloorMS, row.PacingAllowanceMS)
		if row.Succeeded != row.Processes {
			t.Errorf("%s: %d of %d calls answered", row.Mode, row.Succeeded, row.Processes)
		}
		if row.AdmitMS <= 0 || row.AdmitMS > row.WallMS {
			t.Errorf("%s: the calls were admitted over %d ms of a %d ms run", row.Mode, row.AdmitMS, row.WallMS)
		}
		if row.WallMS < row.FloorMS {
			t.Errorf("%s: wall %d ms under the windows' floor of %d ms", row.Mode, row.WallMS, row.FloorMS)
		}
	}
	learned := rows[1]
	if learned.Mode != "learned" || learned.RateLimited != 0 {
		t.Errorf("learned pacing drew %d 429s (%v)", learned.RateLimited, learned.RateLimitedBy)
	}
	if len(learned.PacingAllowanceMS) != 3 {
		t.Errorf("learned allowances %v, want one per deployment", learned.PacingAllowanceMS)
	}
}
