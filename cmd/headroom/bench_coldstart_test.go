package main

import (
	"encoding/json"
	"testing"

	"github.com/headroom-agent/headroom/bench/coldstart"
	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// Separate headroom call processes started at once against sliding
// request windows and a server that counts calls late: every call is
// answered in both modes, and every request-window 429 is in the
// admission log.
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
	// How many 429s a run draws is the benchmark's figure, not this
	// test's: a machine running every package's tests at once starves the
	// clients as no fleet's host should. Each 429 it draws must come with
	// its admission log.
	learned := rows[1]
	if learned.Mode != "learned" {
		t.Errorf("second row %q, want the learned pacing", learned.Mode)
	}
	for _, row := range rows {
		// The simulator logs up to azuresim.MaxRefusals a deployment.
		if n := row.RateLimitedBy["requests"]; n <= azuresim.MaxRefusals && int64(len(row.Overflows)) != n {
			t.Errorf("%s: %d request-window 429s, %d in the admission log: %+v", row.Mode, row.RateLimitedBy["requests"], len(row.Overflows), row.Overflows)
		}
		for _, o := range row.Overflows {
			if o.Deployment == "" || o.WindowMS <= 0 || o.Limit <= 0 {
				t.Errorf("%s: an overflow that names no deployment, window or limit: %+v", row.Mode, o)
			}
		}
	}
	if len(learned.PacingAllowanceMS) != 3 {
		t.Errorf("learned allowances %v, want one per deployment", learned.PacingAllowanceMS)
	}
}
