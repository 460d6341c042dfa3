package main

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/bench/coldstart"
	"github.com/headroom-agent/headroom/budget/learning"
	"github.com/headroom-agent/headroom/budget/redisstore"
)

// benchColdstart starts many headroom call processes at once against
// sliding request windows, today's pacing and the learned one side by side.
func benchColdstart(fs *pflag.FlagSet) runner {
	processes := fs.Int("processes", 200, "headroom call processes started at once")
	redisURL := new(string)
	benchRedisFlag(fs, redisURL, "the Redis `URL` the processes share", "; each mode's keys get a prefix of their own")
	modes := fs.String("modes", strings.Join(coldstart.Modes, ","), "the pacing modes to run, comma-separated, of: "+strings.Join(coldstart.Modes, ", "))
	delay := fs.Duration("dispatch-delay", 20*time.Millisecond, "the simulator counts a call this long after it arrives")
	jitter := fs.Float64("dispatch-jitter", 0.5, "… spread by ± this fraction of itself (with --dispatch-tail 0)")
	tail := fs.Float64("dispatch-tail", 0, "… or drawn from a long tail: a lognormal around --dispatch-delay with this spread (1: the 99th percentile at 10 times the median), a lag the clients cannot see; 0 for the uniform jitter")
	tailMax := fs.Duration("dispatch-max", 0, "the longest delay the tail draws (default 20 times --dispatch-delay)")
	stall := fs.Duration("stall", 20*time.Millisecond, "starve each client as a packed host does: stop it now and then (SIGSTOP, SIGCONT) for a lognormal time around this median (the 99th percentile at 10 times it); 0 for none")
	stallMax := fs.Duration("stall-max", 0, "the longest stall (default 20 times --stall)")
	stallEvery := fs.Duration("stall-every", 0, "the mean time between a client's stalls (default 10 times --stall)")
	coldLag := fs.Duration("cold-lag", 0, "the learned pacing's allowance before any lag is measured (default the config's default, "+learning.DefaultColdLag.String()+")")
	asJSON := fs.Bool("json", false, "print an array of rows as JSON")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *processes < 1 || *delay < 0 || *jitter < 0 || *jitter > 1 || *tail < 0 || *tail > 3 || *tailMax < 0 || *stall < 0 || *stallMax < 0 || *stallEvery < 0 {
			fprintf(stderr, "headroom bench coldstart: --processes must be at least 1, --dispatch-delay, --dispatch-max and the --stall flags at least 0, --dispatch-jitter from 0 to 1, --dispatch-tail from 0 to 3\n")
			return exitUsage
		}
		*redisURL = benchRedis(*redisURL)
		if err := redisstore.Ping(ctx, *redisURL); err != nil {
			return failed(ctx, stderr, "bench coldstart", err)
		}
		self, err := os.Executable()
		if err != nil {
			return failed(ctx, stderr, "bench coldstart", err)
		}
		o := coldstart.Options{
			Processes: *processes, Redis: *redisURL, Modes: strings.Split(*modes, ","),
			DispatchDelay: *delay, DispatchJitter: *jitter, DispatchTail: *tail, DispatchMax: *tailMax,
			Stalls:  coldstart.Stalls{Median: *stall, Max: *stallMax, Every: *stallEvery},
			ColdLag: *coldLag, Binary: self, Progress: stderr,
		}
		if *jitter == 0 {
			o.DispatchJitter = -1 // none, rather than the default
		}
		rows, err := coldstart.Run(ctx, o)
		if err != nil {
			return failed(ctx, stderr, "bench coldstart", err)
		}
		if *asJSON {
			return printJSON(stdout, rows)
		}
		coldstart.Print(stdout, rows)
		return exitOK
	}
}
