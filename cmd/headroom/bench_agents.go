package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/agents"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

func benchAgents(fs *pflag.FlagSet) runner {
	n := fs.Int("agents", 12, "real agents (headroom run, each with its own Chromium)")
	processes := fs.Int("processes", 0, "OS processes the agents are split over (default one per agent)")
	redisURL := fs.String("redis", "", "the Redis `URL` of the shared budget (default $REDIS_URL, else redis://127.0.0.1:6379/15, a database apart from the default one a shared Redis keeps its data in)")
	window := fs.Duration("window", 6*time.Second, "the simulated minute (compressed; the request windows scale with it)")
	demand := fs.Float64("demand", 3, "how many windows of the budget the agents need: the deployments are sized from it")
	tasks := fs.String("tasks", "testdata/tasks/fleet.yaml", "the task `list` agent i takes task i (modulo its length) from (run from the repository's root for the default)")
	budgetMode := fs.String("budget", "", "run one budget mode: shared or per-process (default both, side by side)")
	plot := fs.String("plot", "", "write the plot of the windows' fill and the 429s (SVG) to this `file`")
	asJSON := fs.Bool("json", false, "print an array of rows, one per budget mode, as JSON")
	var mf metricsFlags
	mf.add(fs) // the shared run's fleet, read from the store
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		// Not a flag default: a password in $REDIS_URL would show in -h.
		*redisURL = cmp.Or(*redisURL, os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/15")
		if *n < 1 || *processes < 0 || *processes > *n {
			fprintf(stderr, "headroom bench agents: --agents %d must be at least 1, and --processes %d between 0 (one per agent) and --agents\n", *n, *processes)
			return exitUsage
		}
		if err := checkWindow("--window", *window); err != nil {
			fprintf(stderr, "headroom bench agents: %v\n", err)
			return exitUsage
		}
		if _, err := os.Stat(*tasks); err != nil {
			return failed(ctx, stderr, "bench agents", agent.Usage(fmt.Errorf("--tasks: %w: run it from the repository's root, or name a task list", err)))
		}
		o := agents.Options{
			Agents: *n, Processes: *processes, Redis: *redisURL, Window: *window, Demand: *demand,
			TaskList: *tasks, Progress: stderr,
			Command: func(ctx context.Context, args ...string) *exec.Cmd {
				self, err := os.Executable()
				if err != nil {
					self = os.Args[0]
				}
				cmd := exec.CommandContext(ctx, self, args...)
				cmd.Env = withoutEnv(os.Environ(), "HEADROOM_CONFIG", envJobIndex, envTaskIndex)
				return cmd
			},
		}
		if mf.emf != "" || mf.addr != "" {
			o.Watch = func(mode, cfg string) func() {
				if mode != agents.Shared {
					return func() {} // per-process budgets: nothing shared to read
				}
				return watchStore(ctx, cfg, &mf, stdout, stderr)
			}
		}
		switch *budgetMode {
		case "":
		case agents.Shared, agents.PerProcess:
			o.Modes = []string{*budgetMode}
		default:
			fprintf(stderr, "headroom bench agents: --budget %q: want shared or per-process\n", *budgetMode)
			return exitUsage
		}
		if *budgetMode != agents.PerProcess { // the shared budget is Redis
			if err := redisstore.Ping(ctx, *redisURL); err != nil {
				return failed(ctx, stderr, "bench agents", err)
			}
		}
		rows, err := agents.Run(ctx, o)
		if err != nil {
			return failed(ctx, stderr, "bench agents", err)
		}
		if *plot != "" {
			if err := writePlot(*plot, func(w io.Writer) error { return agents.Plot(w, rows) }); err != nil {
				return failed(ctx, stderr, "bench agents", fmt.Errorf("--plot: %w", err))
			}
			fprintf(stderr, "headroom bench agents: plot written to %s\n", *plot)
		}
		if *asJSON {
			return printJSON(stdout, rows)
		}
		agents.Print(stdout, rows)
		return exitOK
	}
}

// withoutEnv drops the named variables from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if len(kv) > len(n) && kv[:len(n)+1] == n+"=" {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// benchAgentsWorker runs several agents in one process, sharing its
// Caller (and so its budget client), each with a Chromium of its own, and
// prints their results as a JSON array.
func benchAgentsWorker(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file`")
	list := fs.String("tasks", "", "task list `file`")
	var indexes listFlag
	fs.Var(&indexes, "index", "a task `index` to run (repeatable)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		var tasks []*agent.Task
		for _, i := range indexes {
			t, err := pickTask(*list, i)
			if err != nil {
				fprintf(stderr, "headroom bench agents-worker: %v\n", err)
				return exitUsage
			}
			tasks = append(tasks, t)
		}
		caller, code := openCaller(ctx, *configFile, llm.Options{}, stderr)
		if caller == nil {
			return code
		}
		defer func() {
			if err := caller.Close(); err != nil {
				fprintf(stderr, "headroom bench agents-worker: closing the caller: %v\n", err)
			}
		}()
		results, errs := agents.Work(ctx, caller, tasks)
		for _, err := range errs {
			if err != nil {
				fprintf(stderr, "headroom bench agents-worker: %v\n", err) // the result says it too
			}
		}
		return printJSON(stdout, results)
	}
}

// writePlot writes a plot whole or not at all.
func writePlot(path string, write func(io.Writer) error) error {
	if err := safefile.PrepareTarget(path); err != nil {
		return err
	}
	return safefile.WriteFile(path, 0o644, write)
}

// watchStore exports the dashboard of the store a config names, from
// outside the processes that spend it: the fleet as the store sees it.
func watchStore(ctx context.Context, file string, mf *metricsFlags, stdout, stderr io.Writer) func() {
	f, _, err := config.Load(file) // the bench wrote it: no warnings to show
	var router *budget.Router
	closeStore := func() error { return nil }
	if err == nil {
		router, closeStore, err = storeRouter(ctx, &f.Budget)
	}
	var stop func()
	if err == nil {
		mf.stderr = stderr
		stop, err = mf.start(func(ctx context.Context) (metrics.View, error) {
			d, err := router.Dashboard(ctx)
			return metrics.View{Dashboard: d}, err
		}, stdout)
	}
	if err != nil {
		fprintf(stderr, "headroom bench agents: metrics: %v\n", err)
		closeStore()
		return func() {}
	}
	return func() {
		stop()
		closeStore()
	}
}
