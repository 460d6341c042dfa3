package burst

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// Strategies run in turn, each on a fresh simulator, with a row and a
// legend entry each; an interrupt before the first leaves none.
func TestRunAll(t *testing.T) {
	strategies := Baselines()[:2]
	var progress bytes.Buffer
	rows, ran, err := RunAll(t.Context(), strategies, Options{Requests: 3, Attempts: 10, Window: 6 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(ran) != 2 || rows[0].Strategy != strategies[0].Name || rows[1].Strategy != strategies[1].Name {
		t.Fatalf("rows %+v, ran %d; want one row for each of %s and %s, in order", rows, len(ran), strategies[0].Name, strategies[1].Name)
	}
	for _, r := range rows {
		if r.Completed == 0 && r.RateLimited == 0 {
			t.Errorf("%s: nothing completed and nothing was throttled: the strategy reached no simulator", r.Strategy)
		}
	}
	if n := strings.Count(progress.String(), "completed in"); n != 2 {
		t.Errorf("progress says %d strategies ended, want 2:\n%s", n, progress.String())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rows, ran, err = RunAll(ctx, strategies, Options{Requests: 3, Attempts: 10, Window: 6 * time.Second})
	if err != nil || len(rows) != 0 || len(ran) != 0 {
		t.Errorf("interrupted: rows %+v, ran %d, err %v; want none", rows, len(ran), err)
	}
}
