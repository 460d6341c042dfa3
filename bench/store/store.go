// Package store measures a budget store: reservations per second and
// latency of reserve+settle with many concurrent clients, and, for Redis,
// the ceiling the same script reaches when redis-benchmark drives it.
package store

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// Row is one measurement.
type Row struct {
	Clients          int     `json:"clients"`
	ReservationsPerS float64 `json:"reservations_per_s"`
	P50MS            float64 `json:"p50_ms"`
	P99MS            float64 `json:"p99_ms"`
	// Reservations is how many reserve+settle cycles were measured;
	// Errors how many failed (a refusal or an unavailable store).
	Reservations int `json:"reservations"`
	Errors       int `json:"errors"`
}

// limits never bind: the benchmark measures the store, not admission.
var limits = budget.Limits{Tokens: 1 << 50, Requests: 1 << 50, Margin: 1}

// Run drives s from clients goroutines for d, each looping reserve then
// settle on one deployment, and reports the cycles' rate and latency.
func Run(ctx context.Context, s *budget.Store, clients int, d time.Duration) Row {
	lat := make([][]time.Duration, clients)
	errs := make([]int, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				r, err := s.Reserve(ctx, "", "bench", budget.Cost{Tokens: 200}, limits)
				if err == nil {
					err = s.Settle(ctx, r, 120)
				}
				if err != nil {
					errs[c]++
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	row := Row{Clients: clients, Reservations: len(all)}
	for _, e := range errs {
		row.Errors += e
	}
	if len(all) > 0 {
		row.ReservationsPerS = float64(len(all)) / elapsed.Seconds()
		row.P50MS = ms(all[len(all)/2])
		row.P99MS = ms(all[min(len(all)-1, len(all)*99/100)])
	}
	return row
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Ceiling is what redis-benchmark reaches running one script with EVALSHA.
type Ceiling struct {
	Clients int     `json:"clients"`
	PerS    float64 `json:"calls_per_s"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
}

// ErrNoRedisBenchmark means redis-benchmark is not installed.
var ErrNoRedisBenchmark = errors.New("redis-benchmark is not installed")

// RedisCeiling loads script into the Redis at redisURL and runs it n times
// with redis-benchmark from clients connections, each call with a fresh
// reservation id; args follow the keys. The script's keys are given with
// KEYS; "__rand_int__" in them is replaced by a random number per call.
func RedisCeiling(ctx context.Context, redisURL, sha string, keys []string, args []string, clients, n int) (Ceiling, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return Ceiling{}, ErrNoRedisBenchmark
	}
	u, err := url.Parse(redisURL)
	if err != nil {
		return Ceiling{}, err
	}
	argv := []string{"-h", u.Hostname(), "-p", cmp.Or(u.Port(), "6379"), "-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-r", "1000000000", "--csv"}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		argv = append(argv, "--dbnum", db)
	}
	argv = append(argv, "evalsha", sha, strconv.Itoa(len(keys)))
	argv = append(argv, keys...)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	if pw, ok := u.User.Password(); ok {
		// In the environment, not the argument list other users can see.
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+pw)
	}
	out, err := cmd.Output()
	if err != nil {
		return Ceiling{}, fmt.Errorf("redis-benchmark: %w", err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 7 {
		return Ceiling{}, fmt.Errorf("redis-benchmark printed %q", out)
	}
	f := func(i int) float64 { v, _ := strconv.ParseFloat(recs[1][i], 64); return v }
	return Ceiling{Clients: clients, PerS: f(1), P50MS: f(4), P99MS: f(6)}, nil
}
