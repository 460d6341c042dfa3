package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/bench/store"
	"github.com/headroom-agent/headroom/budget/redisstore"
)

// storeBenchFlags are bench store's flags.
type storeBenchFlags struct {
	redisURL string
	clients  string
	duration time.Duration
	window   time.Duration
	asJSON   bool
	ceiling  bool
}

func benchStore(fs *pflag.FlagSet) runner {
	f := &storeBenchFlags{}
	benchRedisFlag(fs, &f.redisURL, "Redis `URL` to measure", "")
	fs.StringVar(&f.clients, "clients", "1,16,64", "comma-separated numbers of concurrent clients, one row each")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "how long each row runs")
	fs.DurationVar(&f.window, "window", 6*time.Second, "token window; short keeps the reservation records' TTLs short")
	fs.BoolVar(&f.asJSON, "json", false, "print an array of rows as JSON")
	fs.BoolVar(&f.ceiling, "ceiling", true, "also drive the same script with redis-benchmark (64 clients) for the ceiling")
	return f.run
}

func (f *storeBenchFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f.redisURL = benchRedis(f.redisURL)
	clients, err := f.check()
	if err != nil {
		fprintf(stderr, "headroom bench store: %v\n", err)
		return exitUsage
	}
	if err := redisstore.Ping(ctx, f.redisURL); err != nil {
		return failed(ctx, stderr, "bench store", err)
	}
	rows, code := f.measure(ctx, stderr, clients)
	if code != exitOK {
		return code
	}
	ceil := f.measureCeiling(ctx, stderr)
	out := stdout
	if f.asJSON {
		if code := f.writeJSON(stdout, rows, ceil); code != exitOK {
			return code
		}
		out = stderr
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "clients\treservations/s\tp50 ms\tp99 ms\terrors\t\n")
		for _, r := range rows {
			fmt.Fprintf(tw, "%d\t%.0f\t%.3f\t%.3f\t%d\t\n", r.Clients, r.ReservationsPerS, r.P50MS, r.P99MS, r.Errors)
		}
		tw.Flush()
	}
	if ceil != nil {
		fprintf(out, "ceiling: redis-benchmark runs the reserve script once per reservation (EVALSHA, %d connections) at %.0f/s, p50 %.3f ms, p99 %.3f ms\n",
			ceil.Clients, ceil.PerS, ceil.P50MS, ceil.P99MS)
		for _, r := range rows {
			if r.Clients == ceil.Clients {
				fprintf(out, "headroom at %d clients: %.0f reservations/s (reserve+settle) = %.0f%% of the ceiling; it can pass the ceiling because concurrent reservations share one script run\n",
					r.Clients, r.ReservationsPerS, 100*r.ReservationsPerS/ceil.PerS)
			}
		}
	}
	return exitOK
}

// check checks the flags and returns the client counts; an error is bad
// usage.
func (f *storeBenchFlags) check() ([]int, error) {
	if f.duration <= 0 {
		return nil, fmt.Errorf("--duration %v: each row needs some time to run, such as 2s", f.duration)
	}
	if err := checkWindow("--window", f.window); err != nil {
		return nil, err
	}
	var clients []int
	for _, c := range strings.Split(f.clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--clients: %q is not a positive number", c)
		}
		clients = append(clients, n)
	}
	return clients, nil
}

// measure runs one row per client count, each on a store of its own.
func (f *storeBenchFlags) measure(ctx context.Context, stderr io.Writer, clients []int) ([]store.Row, int) {
	rows, err := store.MeasureRedis(ctx, f.redisURL, store.Options{Clients: clients, Duration: f.duration, Window: f.window, Progress: stderr})
	switch {
	case errors.Is(err, store.ErrNothingReserved):
		fprintf(stderr, "headroom bench store: %v\n", err)
		return nil, exitFailed
	case err != nil:
		return nil, failed(ctx, stderr, "bench store", err)
	}
	return rows, exitOK
}

// measureCeiling is redis-benchmark's ceiling, or nil when --ceiling is off
// or it cannot be had (said on stderr).
func (f *storeBenchFlags) measureCeiling(ctx context.Context, stderr io.Writer) *store.Ceiling {
	if !f.ceiling {
		return nil
	}
	c, err := store.RedisScriptCeiling(ctx, f.redisURL, f.window)
	switch {
	case errors.Is(err, store.ErrNoRedisBenchmark):
		fprintf(stderr, "headroom bench store: redis-benchmark is not installed; no ceiling\n")
	case err != nil:
		fprintf(stderr, "headroom bench store: ceiling: %v\n", err)
	default:
		return &c
	}
	return nil
}

// writeJSON prints the rows as a JSON array.
func (f *storeBenchFlags) writeJSON(stdout io.Writer, rows []store.Row, ceil *store.Ceiling) int {
	// Each row carries the ceiling, and the row at the ceiling's
	// client count its share of it.
	type jsonRow struct {
		store.Row
		Ceiling   *store.Ceiling `json:"ceiling,omitempty"`
		OfCeiling float64        `json:"of_ceiling,omitempty"`
	}
	js := make([]jsonRow, len(rows))
	for i, r := range rows {
		js[i] = jsonRow{Row: r, Ceiling: ceil}
		if ceil != nil && ceil.Clients == r.Clients && ceil.PerS > 0 {
			js[i].OfCeiling = r.ReservationsPerS / ceil.PerS
		}
	}
	return printJSON(stdout, js)
}
