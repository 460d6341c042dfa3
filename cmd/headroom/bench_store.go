package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/store"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/plural"
)

func benchStore(fs *pflag.FlagSet) runner {
	redisURL := fs.String("redis", "", "Redis `URL` to measure (default $REDIS_URL, else redis://127.0.0.1:6379/15, a database apart from the default one a shared Redis keeps its data in)")
	clientsFlag := fs.String("clients", "1,16,64", "comma-separated numbers of concurrent clients, one row each")
	duration := fs.Duration("duration", 2*time.Second, "how long each row runs")
	window := fs.Duration("window", 6*time.Second, "token window; short keeps the reservation records' TTLs short")
	asJSON := fs.Bool("json", false, "print an array of rows as JSON")
	ceiling := fs.Bool("ceiling", true, "also drive the same script with redis-benchmark (64 clients) for the ceiling")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		// Not a flag default: a password in $REDIS_URL would show in -h.
		*redisURL = cmp.Or(*redisURL, os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/15")
		if *duration <= 0 {
			fprintf(stderr, "headroom bench store: --duration %v: each row needs some time to run, such as 2s\n", *duration)
			return exitUsage
		}
		if err := checkWindow("--window", *window); err != nil {
			fprintf(stderr, "headroom bench store: %v\n", err)
			return exitUsage
		}
		var clients []int
		for _, f := range strings.Split(*clientsFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fprintf(stderr, "headroom bench store: --clients: %q is not a positive number\n", f)
				return exitUsage
			}
			clients = append(clients, n)
		}
		if err := redisstore.Ping(ctx, *redisURL); err != nil {
			return failed(ctx, stderr, "bench store", err)
		}
		var rows []store.Row
		for _, n := range clients {
			rdb, err := redisstore.Dial(*redisURL, n)
			if err != nil {
				return failed(ctx, stderr, "bench store", agent.Usage(err))
			}
			s, err := redisstore.New(ctx, redisstore.Options{Client: rdb, Prefix: "bench:" + budget.NewID(), Window: *window})
			if err != nil {
				rdb.Close()
				return failed(ctx, stderr, "bench store", err)
			}
			fprintf(stderr, "headroom bench store: %s for %v…\n", plural.Of(n, "client"), *duration)
			row := store.Run(ctx, s, n, *duration)
			s.Close()
			if row.Reservations == 0 {
				fprintf(stderr, "headroom bench store: no reservation succeeded (%s): is Redis at %s?\n", plural.Of(row.Errors, "error"), redisstore.Redact(*redisURL))
				return exitFailed
			}
			rows = append(rows, row)
		}
		var ceil *store.Ceiling
		if *ceiling {
			c, err := redisCeiling(ctx, *redisURL, *window)
			switch {
			case errors.Is(err, store.ErrNoRedisBenchmark):
				fprintf(stderr, "headroom bench store: redis-benchmark is not installed; no ceiling\n")
			case err != nil:
				fprintf(stderr, "headroom bench store: ceiling: %v\n", err)
			default:
				ceil = &c
			}
		}
		out := stdout
		if *asJSON {
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
			if code := printJSON(stdout, js); code != exitOK {
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
}

// redisCeiling runs the reservation script, as the store lays it out, from
// redis-benchmark with 64 connections.
func redisCeiling(ctx context.Context, url string, window time.Duration) (store.Ceiling, error) {
	rdb, err := redisstore.Dial(url, 1)
	if err != nil {
		return store.Ceiling{}, err
	}
	s, err := redisstore.New(ctx, redisstore.Options{Client: rdb, Prefix: "bench:" + budget.NewID(), Window: window})
	if err != nil {
		return store.Ceiling{}, err
	}
	defer s.Close()
	sha, keys, args := s.ReserveCall("__rand_int__", "bench", budget.Cost{Tokens: 200}, budget.Limits{Tokens: 1 << 50, Requests: 1 << 50, Margin: 1})
	return store.RedisCeiling(ctx, url, sha, keys, args, 64, 200000)
}
