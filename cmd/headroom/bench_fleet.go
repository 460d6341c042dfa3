package main

import (
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

// fleetBenchFlags holds the values of bench fleet's flags.
type fleetBenchFlags struct {
	agents, processes int
	redisURL          string
	window            time.Duration
	windows           int
	strategy          string
	scale             float64
	sliding           string
	plot              string
	asJSON            bool
}

func benchFleet(fs *pflag.FlagSet) runner {
	fb := &fleetBenchFlags{}
	fs.IntVar(&fb.agents, "agents", 400, "agents' worth of callers in the fleet")
	fs.IntVar(&fb.processes, "processes", 4, "OS processes the agents are split over")
	benchRedisFlag(fs, &fb.redisURL, "the Redis `URL` the processes share", "")
	fs.DurationVar(&fb.window, "window", 6*time.Second, "the simulated minute (compressed; the request windows scale with it)")
	fs.IntVar(&fb.windows, "windows", 4, "how many windows the fleet runs per strategy")
	fs.StringVar(&fb.strategy, "strategy", "", "run these strategies, comma-separated, of: "+strings.Join(fleet.Known, ", "))
	fs.Float64Var(&fb.scale, "estimate-scale", 1, "the simulator charges each call this multiple of headroom's estimate")
	fs.StringVar(&fb.sliding, "sliding", "", "make the simulator's windows slide: requests, tokens, or both (comma-separated)")
	fs.StringVar(&fb.plot, "plot", "", "write the reserved-fraction plot (SVG) to this `file`")
	fs.BoolVar(&fb.asJSON, "json", false, "print an array of rows as JSON")
	return fb.run
}

func (fb *fleetBenchFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fb.redisURL = benchRedis(fb.redisURL)
	opts, ok := fb.options(ctx, stderr)
	if !ok {
		return exitUsage
	}
	if err := redisstore.Ping(ctx, fb.redisURL); err != nil {
		return failed(ctx, stderr, "bench fleet", err)
	}
	rows, err := fleet.Run(ctx, opts)
	if err != nil {
		return failed(ctx, stderr, "bench fleet", err)
	}
	if fb.plot != "" {
		fb.writePlot(rows, stderr)
	}
	if fb.asJSON {
		return printJSON(stdout, rows)
	}
	fleet.Print(stdout, rows)
	return exitOK
}

// options checks the flags and turns them into the fleet's options; false
// means a usage error, already told on stderr.
func (fb *fleetBenchFlags) options(ctx context.Context, stderr io.Writer) (fleet.Options, bool) {
	if fb.agents < fb.processes || fb.processes < 1 {
		fprintf(stderr, "headroom bench fleet: --agents %d must be at least --processes %d, which must be at least 1\n", fb.agents, fb.processes)
		return fleet.Options{}, false
	}
	if err := checkWindow("--window", fb.window); err != nil {
		fprintf(stderr, "headroom bench fleet: %v\n", err)
		return fleet.Options{}, false
	}
	opts := fleet.Options{
		Agents: fb.agents, Processes: fb.processes, Redis: fb.redisURL, Window: fb.window, Windows: fb.windows,
		Progress: stderr,
		Worker: func() *exec.Cmd {
			self, err := os.Executable()
			if err != nil {
				self = os.Args[0]
			}
			return exec.CommandContext(ctx, self, "bench", "fleet-worker")
		},
	}
	if fb.strategy != "" {
		for _, st := range strings.Split(fb.strategy, ",") {
			if !slices.Contains(fleet.Known, st) {
				fprintf(stderr, "headroom bench fleet: unknown strategy %q (have %s)\n", st, strings.Join(fleet.Known, ", "))
				return fleet.Options{}, false
			}
			opts.Strategies = append(opts.Strategies, st)
		}
	}
	if fb.scale <= 0 {
		fprintf(stderr, "headroom bench fleet: --estimate-scale %v must be above 0\n", fb.scale)
		return fleet.Options{}, false
	}
	opts.EstimateScale = fb.scale
	return opts, fb.slidingWindows(&opts, stderr)
}

// slidingWindows sets which of the simulator's windows slide; false means
// --sliding named something else, already told on stderr.
func (fb *fleetBenchFlags) slidingWindows(opts *fleet.Options, stderr io.Writer) bool {
	if fb.sliding == "" {
		return true
	}
	for _, w := range strings.Split(fb.sliding, ",") {
		switch w {
		case "requests":
			opts.RequestWindows = azuresim.SlidingWindow
		case "tokens":
			opts.TokenWindow = azuresim.SlidingWindow
		default:
			fprintf(stderr, "headroom bench fleet: --sliding %q: want requests, tokens or both, comma-separated\n", w)
			return false
		}
	}
	return true
}

// writePlot writes the reserved-fraction plot; a plot that fails is only
// warned about, since the rows are still printed.
func (fb *fleetBenchFlags) writePlot(rows []fleet.Row, stderr io.Writer) {
	var names []string
	for _, d := range rows[0].Deployments {
		names = append(names, d.Name)
	}
	err := safefile.WriteFile(fb.plot, 0o644, func(w io.Writer) error { return fleet.Plot(w, rows, names) })
	if err != nil {
		fprintf(stderr, "headroom bench fleet: plot: %v\n", err)
	} else {
		fprintf(stderr, "headroom bench fleet: plot written to %s\n", fb.plot)
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
