package main

import (
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

// agentsBenchFlags holds the values of bench agents' flags.
type agentsBenchFlags struct {
	n, processes int
	redisURL     string
	window       time.Duration
	demand       float64
	tasks        string
	budgetMode   string
	plot         string
	asJSON       bool
	mf           metricsFlags
}

func benchAgents(fs *pflag.FlagSet) runner {
	ab := &agentsBenchFlags{}
	fs.IntVar(&ab.n, "agents", 12, "real agents (headroom run, each with its own Chromium)")
	fs.IntVar(&ab.processes, "processes", 0, "OS processes the agents are split over (default one per agent)")
	benchRedisFlag(fs, &ab.redisURL, "the Redis `URL` of the shared budget", "")
	fs.DurationVar(&ab.window, "window", 6*time.Second, "the simulated minute (compressed; the request windows scale with it)")
	fs.Float64Var(&ab.demand, "demand", 3, "how many windows of the budget the agents need: the deployments are sized from it")
	fs.StringVar(&ab.tasks, "tasks", "testdata/tasks/fleet.yaml", "the task `list` agent i takes task i (modulo its length) from (run from the repository's root for the default)")
	fs.StringVar(&ab.budgetMode, "budget", "", "run one budget mode: shared or per-process (default both, side by side)")
	fs.StringVar(&ab.plot, "plot", "", "write the plot of the windows' fill and the 429s (SVG) to this `file`")
	fs.BoolVar(&ab.asJSON, "json", false, "print an array of rows, one per budget mode, as JSON")
	ab.mf.add(fs) // the shared run's fleet, read from the store
	return ab.run
}

func (ab *agentsBenchFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ab.redisURL = benchRedis(ab.redisURL)
	if code := ab.check(ctx, stderr); code != exitOK {
		return code
	}
	if ab.budgetMode != agents.PerProcess { // the shared budget is Redis
		if err := redisstore.Ping(ctx, ab.redisURL); err != nil {
			return failed(ctx, stderr, "bench agents", err)
		}
	}
	rows, err := agents.Run(ctx, ab.options(ctx, stdout, stderr))
	if err != nil {
		return failed(ctx, stderr, "bench agents", err)
	}
	if ab.plot != "" {
		if err := writePlot(ab.plot, func(w io.Writer) error { return agents.Plot(w, rows) }); err != nil {
			return failed(ctx, stderr, "bench agents", fmt.Errorf("--plot: %w", err))
		}
		fprintf(stderr, "headroom bench agents: plot written to %s\n", ab.plot)
	}
	if ab.asJSON {
		return printJSON(stdout, rows)
	}
	agents.Print(stdout, rows)
	return exitOK
}

// check refuses the flags out of range, a task list that is not there and
// an unknown budget mode, telling why on stderr.
func (ab *agentsBenchFlags) check(ctx context.Context, stderr io.Writer) int {
	if ab.n < 1 || ab.processes < 0 || ab.processes > ab.n {
		fprintf(stderr, "headroom bench agents: --agents %d must be at least 1, and --processes %d between 0 (one per agent) and --agents\n", ab.n, ab.processes)
		return exitUsage
	}
	if err := checkWindow("--window", ab.window); err != nil {
		fprintf(stderr, "headroom bench agents: %v\n", err)
		return exitUsage
	}
	if _, err := os.Stat(ab.tasks); err != nil {
		return failed(ctx, stderr, "bench agents", agent.Usage(fmt.Errorf("--tasks: %w: run it from the repository's root, or name a task list", err)))
	}
	switch ab.budgetMode {
	case "", agents.Shared, agents.PerProcess:
	default:
		fprintf(stderr, "headroom bench agents: --budget %q: want shared or per-process\n", ab.budgetMode)
		return exitUsage
	}
	return exitOK
}

// options turns the checked flags into the bench's options.
func (ab *agentsBenchFlags) options(ctx context.Context, stdout, stderr io.Writer) agents.Options {
	o := agents.Options{
		Agents: ab.n, Processes: ab.processes, Redis: ab.redisURL, Window: ab.window, Demand: ab.demand,
		TaskList: ab.tasks, Progress: stderr,
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
	if ab.mf.emf != "" || ab.mf.addr != "" {
		o.Watch = func(mode, cfg string) func() {
			if mode != agents.Shared {
				return func() {} // per-process budgets: nothing shared to read
			}
			return watchStore(ctx, cfg, &ab.mf, stdout, stderr)
		}
	}
	if ab.budgetMode != "" {
		o.Modes = []string{ab.budgetMode}
	}
	return o
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
