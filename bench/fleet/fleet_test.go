package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// TestMain lets the test binary be a worker process of the fleet.
func TestMain(m *testing.M) {
	if os.Getenv("HEADROOM_FLEETBENCH_WORKER") == "1" {
		var spec WorkerSpec
		if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		res, err := RunWorker(context.Background(), spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(res)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestFleetHeadroomBeatsRoundRobin(t *testing.T) {
	url := redistest.URL(t)
	var progress bytes.Buffer
	rows, err := Run(context.Background(), Options{
		// Small deployments keep demand above supply with few agents.
		Agents: 40, Processes: 2, Redis: url, Window: 1200 * time.Millisecond, Windows: 3,
		Deployments: []Deployment{{"a", 24000}, {"b", 12000}, {"c", 6000}},
		Strategies:  []string{"round-robin", "headroom"},
		Worker: func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "HEADROOM_FLEETBENCH_WORKER=1")
			return cmd
		},
		Progress: &progress,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	rr, h := rows[0], rows[1]
	// Throughput is a timed figure: a loaded machine lowers it, so the
	// test asks only that work got done; `headroom bench fleet` reports it.
	if h.Completed == 0 || h.ThroughputFraction <= 0 || len(h.Deployments) != 3 || len(h.Samples) == 0 {
		t.Errorf("headroom row %+v", h)
	}
	if h.RateLimited >= rr.RateLimited {
		t.Errorf("headroom 429s %d, round-robin %d", h.RateLimited, rr.RateLimited)
	}
	var table, svg strings.Builder
	Print(&table, rows)
	if !strings.Contains(table.String(), "round-robin") || !strings.Contains(table.String(), "headroom") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := Plot(&svg, rows, []string{"a", "b", "c"}); err != nil || strings.Count(svg.String(), "<polyline") != 6 {
		t.Errorf("plot: %v, %d lines", err, strings.Count(svg.String(), "<polyline"))
	}
	t.Logf("\n%s", table.String())
}

// A deployment's logged refusals are timed from the run's start, with
// how far apart the calls the refusing window held were counted.
func TestRefusalsAreTimedFromTheRunsStart(t *testing.T) {
	began := time.Unix(1_000, 0)
	st := azuresim.Stats{Refusals: []azuresim.Refusal{
		{At: began.Add(2500 * time.Millisecond), Window: 100 * time.Millisecond, Limit: 6, Held: []time.Time{began.Add(2410 * time.Millisecond)}},
		{At: began.Add(3 * time.Second), Window: time.Second, Limit: 60},
	}}
	got := refusals(st, began)
	want := []Refusal{{AtMS: 2500, WindowMS: 100, Limit: 6, HeldSpanMS: 90}, {AtMS: 3000, WindowMS: 1000, Limit: 60}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("refusals %+v, want %+v", got, want)
	}
}
