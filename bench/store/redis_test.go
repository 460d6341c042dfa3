package store

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/redistest"
)

// Against a real redis-server, one row per client count, each with its
// count and some reservations; a Redis that is not there is an error and
// no rows.
func TestMeasureRedis(t *testing.T) {
	srv, err := redistest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	var progress bytes.Buffer
	rows, err := MeasureRedis(context.Background(), srv.URL(), Options{Clients: []int{1, 4}, Duration: 100 * time.Millisecond, Window: 6 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Clients != 1 || rows[1].Clients != 4 {
		t.Fatalf("rows %+v, want one for 1 client and one for 4", rows)
	}
	for _, r := range rows {
		if r.Reservations == 0 || r.ReservationsPerS <= 0 || r.P99MS < r.P50MS {
			t.Errorf("row %+v: no reservations, or a p99 under its p50", r)
		}
	}
	if got := progress.String(); !strings.Contains(got, "1 client for 100ms") || !strings.Contains(got, "4 clients for 100ms") {
		t.Errorf("progress %q, want a line per row", got)
	}
	srv.Kill()
	rows, err = MeasureRedis(context.Background(), srv.URL(), Options{Clients: []int{1}, Duration: 100 * time.Millisecond, Window: 6 * time.Second})
	if err == nil || len(rows) != 0 {
		t.Errorf("a Redis that is gone: rows %+v, err %v; want an error and none", rows, err)
	}
}
