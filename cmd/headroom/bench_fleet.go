package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/fleet"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

func benchFleet(fs *pflag.FlagSet) runner {
	agents := fs.Int("agents", 400, "agents' worth of callers in the fleet")
	processes := fs.Int("processes", 4, "OS processes the agents are split over")
	redisURL := fs.String("redis", "", "the Redis `URL` the processes share (default $REDIS_URL, else redis://127.0.0.1:6379/15, a database apart from the default one a shared Redis keeps its data in)")
	window := fs.Duration("window", 6*time.Second, "the simulated minute (compressed; the request windows scale with it)")
	windows := fs.Int("windows", 4, "how many windows the fleet runs per strategy")
	strategy := fs.String("strategy", "", "run these strategies, comma-separated, of: "+strings.Join(fleet.Known, ", "))
	scale := fs.Float64("estimate-scale", 1, "the simulator charges each call this multiple of headroom's estimate")
	sliding := fs.String("sliding", "", "make the simulator's windows slide: requests, tokens, or both (comma-separated)")
	plot := fs.String("plot", "", "write the reserved-fraction plot (SVG) to this `file`")
	asJSON := fs.Bool("json", false, "print an array of rows as JSON")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		// Not a flag default: a password in $REDIS_URL would show in -h.
		*redisURL = cmp.Or(*redisURL, os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/15")
		if *agents < *processes || *processes < 1 {
			fprintf(stderr, "headroom bench fleet: --agents %d must be at least --processes %d, which must be at least 1\n", *agents, *processes)
			return exitUsage
		}
		if err := checkWindow("--window", *window); err != nil {
			fprintf(stderr, "headroom bench fleet: %v\n", err)
			return exitUsage
		}
		opts := fleet.Options{
			Agents: *agents, Processes: *processes, Redis: *redisURL, Window: *window, Windows: *windows,
			Progress: stderr,
			Worker: func() *exec.Cmd {
				self, err := os.Executable()
				if err != nil {
					self = os.Args[0]
				}
				return exec.CommandContext(ctx, self, "bench", "fleet-worker")
			},
		}
		if *strategy != "" {
			for _, st := range strings.Split(*strategy, ",") {
				if !slices.Contains(fleet.Known, st) {
					fprintf(stderr, "headroom bench fleet: unknown strategy %q (have %s)\n", st, strings.Join(fleet.Known, ", "))
					return exitUsage
				}
				opts.Strategies = append(opts.Strategies, st)
			}
		}
		if *scale <= 0 {
			fprintf(stderr, "headroom bench fleet: --estimate-scale %v must be above 0\n", *scale)
			return exitUsage
		}
		opts.EstimateScale = *scale
		if *sliding != "" {
			for _, w := range strings.Split(*sliding, ",") {
				switch w {
				case "requests":
					opts.RequestWindows = azuresim.SlidingWindow
				case "tokens":
					opts.TokenWindow = azuresim.SlidingWindow
				default:
					fprintf(stderr, "headroom bench fleet: --sliding %q: want requests, tokens or both, comma-separated\n", w)
					return exitUsage
				}
			}
		}
		if err := redisstore.Ping(ctx, *redisURL); err != nil {
			return failed(ctx, stderr, "bench fleet", err)
		}
		rows, err := fleet.Run(ctx, opts)
		if err != nil {
			return failed(ctx, stderr, "bench fleet", err)
		}
		if *plot != "" {
			var names []string
			for _, d := range rows[0].Deployments {
				names = append(names, d.Name)
			}
			err := safefile.WriteFile(*plot, 0o644, func(w io.Writer) error { return fleet.Plot(w, rows, names) })
			if err != nil {
				fprintf(stderr, "headroom bench fleet: plot: %v\n", err)
			} else {
				fprintf(stderr, "headroom bench fleet: plot written to %s\n", *plot)
			}
		}
		if *asJSON {
			return printJSON(stdout, rows)
		}
		fleet.Print(stdout, rows)
		return exitOK
	}
}

// benchFleetWorker is one process of a fleet: it reads its spec on stdin
// and prints its result.
func benchFleetWorker(*pflag.FlagSet) runner { return fleetWorker }

func fleetWorker(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
	var spec fleet.WorkerSpec
	raw, err := safefile.ReadAll(ctx, os.Stdin, 1<<20, "the spec on standard input")
	if err == nil {
		err = json.Unmarshal(raw, &spec)
	}
	if err != nil {
		return failed(ctx, stderr, "bench fleet-worker", agent.Usage(fmt.Errorf("spec on stdin: %w", err)))
	}
	res, err := fleet.RunWorker(ctx, spec)
	if err != nil {
		return failed(ctx, stderr, "bench fleet-worker", err)
	}
	return printJSON(stdout, res)
}
