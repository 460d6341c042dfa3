// Package agents measures real agents sharing one budget: N `headroom
// run` processes, each with its own Chromium, on replayed tasks, against
// simulated deployments too small for all of them at once (a compressed
// minute). It runs the same agents twice, side by side: once sharing a
// Redis store, once with each process keeping its own in-memory budget,
// which is what a fleet without a shared store does.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// The budget modes, in the order they run.
const (
	Shared     = "shared"      // one Redis store for every process
	PerProcess = "per-process" // each process its own in-memory budget
)

// Modes lists the budget modes.
var Modes = []string{Shared, PerProcess}

// Options shape a run. The zero value of each field but Redis and Run has
// a default.
type Options struct {
	Agents int // default 12
	// Processes the agents are split over; 0 is one per agent, each a
	// `headroom run` of its own.
	Processes int
	Redis     string        // the shared store; required for the shared mode
	Window    time.Duration // the simulated minute; default 6s
	// Demand is how many windows' worth of the budget the agents need
	// (default 3): the deployments are sized from it.
	Demand float64
	Margin float64 // default budget.DefaultMargin
	// TaskList is the task list each agent takes its task from, agent i
	// running task i modulo its length.
	TaskList string
	Modes    []string // default Modes
	// Dir holds the configs and the agents' output; default a temporary
	// directory, removed after.
	Dir string
	// Command returns the command of one agent process: `headroom` with
	// these arguments (run ..., or bench agents-worker when several
	// agents share a process).
	Command  func(ctx context.Context, args ...string) *exec.Cmd
	Progress io.Writer
	// Watch, when set, is called with each mode's config file before its
	// agents start, and what it returns after they end: how the benchmark
	// exports the fleet's metrics from the shared store while it runs.
	Watch func(mode, config string) (stop func())
}

// TokensPerTask is what one of the test tasks reserves, on average, with
// the types' caps: 6,157 tokens over the nine tasks of
// testdata/tasks/fleet.yaml, run one at a time.
const TokensPerTask = 6200

// Row is one budget mode's result.
type Row struct {
	Budget    string `json:"budget"`
	Agents    int    `json:"agents"`
	Processes int    `json:"processes"`
	// Window is the compressed minute the run used.
	Window    time.Duration `json:"-"`
	WindowS   float64       `json:"window_s"`
	Succeeded int           `json:"succeeded"`
	// Verified and Judged split Succeeded: the task's success check passed
	// on the final page, or the model judged the goal met and nothing
	// verified it.
	Verified int `json:"verified"`
	Judged   int `json:"judged"`
	// Statuses counts the agents by how their task ended; Failures says
	// why for each that did not succeed.
	Statuses map[string]int `json:"statuses"`
	Failures []string       `json:"failures,omitempty"`
	// RateLimited is the 429s the simulator sent, by cause;
	// AgentsRateLimited what the agents' calls met (the same 429s, seen
	// from the client, retries included).
	RateLimited        int64            `json:"rate_limited"`
	RateLimitedByCause map[string]int64 `json:"rate_limited_by_cause"`
	AgentsRateLimited  int              `json:"agents_rate_limited"`
	Calls              int              `json:"calls"`
	// TokensReserved is what the agents' calls charged the budget;
	// Allowance the budget's tokens per window, Σ limit × margin.
	TokensReserved int64 `json:"tokens_reserved"`
	Allowance      int64 `json:"allowance"`
	// AdmittedPerWindow is the tokens the simulator admitted in each whole
	// window of the run, as a fraction of Allowance.
	AdmittedPerWindow []float64 `json:"admitted_per_window"`
	// WallS is from the start to the last agent's exit; FloorS the least
	// the budget allows for what the agents reserved: the start of the
	// last window their tokens (or requests) need, counted from the window
	// of the first call. StartupS is the time to the first call: the
	// agents' processes and browsers starting.
	WallS    float64 `json:"wall_s"`
	FloorS   float64 `json:"floor_s"`
	StartupS float64 `json:"startup_s"`
	// StepOverheadMS is the agent's own time per step, its model calls'
	// latency left out, over every step of every agent.
	StepOverheadMSP50 float64 `json:"step_overhead_ms_p50"`
	StepOverheadMSP90 float64 `json:"step_overhead_ms_p90"`
	// PeakRSSMB is the largest headroom + Chrome peak of one agent; the
	// two parts are the largest of each.
	PeakRSSMB         float64 `json:"peak_rss_mb"`
	HeadroomPeakRSSMB float64 `json:"headroom_peak_rss_mb"`
	ChromePeakRSSMB   float64 `json:"chrome_peak_rss_mb"`
	// Samples are the window's fill over time, for the plot.
	Samples []Sample `json:"-"`
}

// Sample is the share of the allowance the current window holds, summed
// over the deployments, and the 429s so far, at one instant.
type Sample struct {
	At          time.Duration
	Fraction    float64
	RateLimited int64
}

func (o *Options) defaults() error {
	if o.Agents <= 0 {
		o.Agents = 12
	}
	if o.Processes <= 0 || o.Processes > o.Agents {
		o.Processes = o.Agents
	}
	if o.Window <= 0 {
		o.Window = 6 * time.Second
	}
	if o.Demand <= 0 {
		o.Demand = 3
	}
	if o.Margin <= 0 {
		o.Margin = budget.DefaultMargin
	}
	if len(o.Modes) == 0 {
		o.Modes = Modes
	}
	if slices.Contains(o.Modes, Shared) && o.Redis == "" {
		return fmt.Errorf("the shared budget needs a Redis URL")
	}
	if o.Command == nil {
		return fmt.Errorf("no command to start agents with")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return nil
}

// Run runs the agents once per budget mode, each against a fresh
// simulator.
func Run(ctx context.Context, o Options) ([]Row, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	tasks, err := agent.LoadTaskList(o.TaskList)
	if err != nil {
		return nil, err
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "headroom-bench-agents")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.Dir = dir
	}
	var rows []Row
	for _, mode := range o.Modes {
		fmt.Fprintf(o.Progress, "headroom bench agents: %s budget: %s in %s, window %v…\n", mode, plural.Of(o.Agents, "agent"), plural.Of(o.Processes, "process/processes"), o.Window)
		row, err := runMode(ctx, o, mode, len(tasks))
		if err != nil {
			return rows, fmt.Errorf("%s: %w", mode, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// deployments sizes three deployments (in the proportions 3:2:1) so that
// the agents need o.Demand windows of their allowance.
func deployments(o Options) []azuresim.Deployment {
	total := float64(o.Agents) * TokensPerTask / o.Demand / o.Margin
	var out []azuresim.Deployment
	for i, share := range []float64{0.5, 1.0 / 3, 1.0 / 6} {
		tpm := max(4000, int64(math.Round(total*share/1000))*1000)
		out = append(out, azuresim.Deployment{
			Name: string(rune('a' + i)), Model: "gpt-4o-mini", ModelVersion: "2024-07-18",
			TPM: tpm, RPM: models.DefaultRPM("gpt-4o-mini", tpm),
			Region: []string{"eastus", "swedencentral", "westus"}[i], Reply: "heuristic",
		})
	}
	return out
}

func runMode(ctx context.Context, o Options, mode string, nTasks int) (Row, error) {
	deps := deployments(o)
	sim, err := azuresim.New(azuresim.Config{Window: o.Window, Seed: 1, Deployments: deps,
		Faults: azuresim.Faults{Latency: 100 * time.Millisecond, Jitter: 0.5}},
		azuresim.Options{Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		return Row{}, err
	}
	srv, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return Row{}, err
	}
	defer srv.Close()

	dir := filepath.Join(o.Dir, mode)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Row{}, err
	}
	cfg := filepath.Join(dir, "headroom.yaml")
	if err := safefile.WriteBytes(cfg, []byte(configFile(o, mode, srv.URL, deps)), 0o644); err != nil {
		return Row{}, err
	}

	if o.Watch != nil {
		stop := o.Watch(mode, cfg)
		defer stop()
	}
	// Every agent starts at once, a moment before a window begins, so
	// their first calls meet the same windows.
	w := o.Window.Milliseconds()
	start := time.UnixMilli((time.Now().Add(300*time.Millisecond).UnixMilli()/w + 1) * w)
	time.Sleep(time.Until(start) - 200*time.Millisecond)
	began := time.Now()
	sampled := make(chan []Sample, 1)
	sctx, stopSampling := context.WithCancel(ctx)
	go func() { sampled <- sample(sctx, sim, o, deps, start) }()

	results := make([]agent.Result, o.Agents)
	errs := make([]error, o.Processes)
	var wg sync.WaitGroup
	for p, idx := range split(o.Agents, o.Processes) {
		wg.Go(func() { errs[p] = runProcess(ctx, o, cfg, dir, idx, nTasks, results) })
	}
	wg.Wait()
	wall := time.Since(began)
	stopSampling()
	samples := <-sampled
	for _, err := range errs {
		if err != nil {
			return Row{}, err
		}
	}
	return summarize(o, mode, deps, sim.Stats(), results, samples, wall), nil
}

// split deals the agents' indexes out to the processes.
func split(agents, processes int) [][]int {
	out := make([][]int, processes)
	for i := range agents {
		out[i%processes] = append(out[i%processes], i)
	}
	return out
}

// configFile is the agents' config: the simulator's deployments, with the
// shared store or none.
func configFile(o Options, mode, endpoint string, deps []azuresim.Deployment) string {
	var b strings.Builder
	if mode == Shared {
		fmt.Fprintf(&b, "redis: %s\n", o.Redis)
	}
	// A name of its own per run: a store's windows outlive the run that
	// filled them.
	id := budget.NewID()[:8]
	fmt.Fprintf(&b, "window: %v\nmargin: %g\ndeployments:\n", o.Window, o.Margin)
	for _, d := range deps {
		fmt.Fprintf(&b, "  - name: %s-%s\n    endpoint: %s\n    deployment: %s\n    model: %s\n    model_version: %q\n    region: %s\n    tpm: %d\n    rpm: %d\n    auth: {api_key_env: %s}\n",
			d.Name, id, endpoint, d.Name, d.Model, d.ModelVersion, d.Region, d.TPM, d.RPM, KeyEnv)
	}
	return b.String()
}

// KeyEnv holds the key the agents send; the simulator takes any.
const KeyEnv = "HEADROOM_BENCH_KEY"

// runProcess runs the agents idx in one process and fills their results.
func runProcess(ctx context.Context, o Options, cfg, dir string, idx []int, nTasks int, results []agent.Result) error {
	var args []string
	list, err := filepath.Abs(o.TaskList)
	if err != nil {
		return err
	}
	if len(idx) == 1 {
		args = []string{"run", "--config", cfg, "--tasks", list, "--index", fmt.Sprint(idx[0] % nTasks)}
	} else {
		args = []string{"bench", "agents-worker", "--config", cfg, "--tasks", list}
		for _, i := range idx {
			args = append(args, "--index", fmt.Sprint(i%nTasks))
		}
	}
	cmd := o.Command(ctx, args...)
	cmd.Env = append(cmd.Environ(), KeyEnv+"=bench")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	_ = safefile.WriteBytes(filepath.Join(dir, fmt.Sprintf("agent-%d.log", idx[0])), errb.Bytes(), 0o644)
	// A task that fails still prints its result; only a run that could not
	// start (bad usage, exit 2) is the bench's own failure.
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 2) {
		return fmt.Errorf("agent %d: %v: %s", idx[0], err, lastLine(errb.String()))
	}
	if len(idx) == 1 {
		var r agent.Result
		if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
			return fmt.Errorf("agent %d printed no result (%v): %s", idx[0], err, lastLine(errb.String()))
		}
		results[idx[0]] = r
		return nil
	}
	var rs []agent.Result
	if jerr := json.Unmarshal(out.Bytes(), &rs); jerr != nil || len(rs) != len(idx) {
		return fmt.Errorf("agents %v printed no results (%v): %s", idx, err, lastLine(errb.String()))
	}
	for k, i := range idx {
		results[i] = rs[k]
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// sample reads the simulator's windows until ctx ends.
func sample(ctx context.Context, sim *azuresim.Sim, o Options, deps []azuresim.Deployment, start time.Time) []Sample {
	var allowance float64
	for _, d := range deps {
		allowance += float64(d.TPM) * o.Margin
	}
	tick := time.NewTicker(o.Window / 60)
	defer tick.Stop()
	var out []Sample
	for {
		select {
		case <-ctx.Done():
			return out
		case now := <-tick.C:
			s := Sample{At: now.Sub(start)}
			for _, st := range sim.Stats().Deployments {
				s.Fraction += float64(st.WindowTokens) / allowance
				s.RateLimited += st.RateLimited.Total()
			}
			out = append(out, s)
		}
	}
}

func summarize(o Options, mode string, deps []azuresim.Deployment, snap azuresim.Snapshot, results []agent.Result, samples []Sample, wall time.Duration) Row {
	row := Row{Budget: mode, Agents: o.Agents, Processes: o.Processes, Statuses: map[string]int{},
		RateLimitedByCause: map[string]int64{"tokens": 0, "requests": 0, "adjustment": 0},
		Window:             o.Window, WindowS: o.Window.Seconds(), WallS: wall.Seconds(), Samples: samples}
	var rpw int64
	for _, d := range deps {
		row.Allowance += int64(float64(d.TPM) * o.Margin)
		rpw += d.RPM
	}
	for _, st := range snap.Deployments {
		rl := st.RateLimited
		row.RateLimited += rl.Total()
		row.RateLimitedByCause["tokens"] += rl.Tokens
		row.RateLimitedByCause["requests"] += rl.Requests
		row.RateLimitedByCause["adjustment"] += rl.Adjustment
	}
	var overhead []float64
	for _, r := range results {
		row.Statuses[string(r.Status)]++
		if r.Status == agent.Succeeded {
			row.Succeeded++
			if r.SuccessBy == agent.SuccessChecked {
				row.Verified++
			} else {
				row.Judged++
			}
		} else {
			row.Failures = append(row.Failures, fmt.Sprintf("%s: %s: %s", r.Task, r.Status, r.Reason))
		}
		row.Calls += r.Totals.Calls
		row.TokensReserved += r.Totals.TokensReserved
		row.AgentsRateLimited += r.Totals.RateLimited
		for _, s := range r.Steps {
			overhead = append(overhead, float64(s.AgentMS))
		}
		row.PeakRSSMB = max(row.PeakRSSMB, r.Totals.PeakRSSMB+r.Totals.ChromePeakRSSMB)
		row.HeadroomPeakRSSMB = max(row.HeadroomPeakRSSMB, r.Totals.PeakRSSMB)
		row.ChromePeakRSSMB = max(row.ChromePeakRSSMB, r.Totals.ChromePeakRSSMB)
	}
	row.StepOverheadMSP50, row.StepOverheadMSP90 = percentile(overhead, 0.5), percentile(overhead, 0.9)
	// The last window the demand needs starts this many windows in: before
	// then the budget cannot have admitted it all.
	windows := max(math.Ceil(float64(row.TokensReserved)/float64(row.Allowance)), math.Ceil(float64(row.Calls)/float64(rpw)))
	first := -1
	for i, s := range samples {
		if s.Fraction > 0 {
			first = i
			break
		}
	}
	var firstWindow time.Duration
	if first >= 0 {
		row.StartupS = samples[first].At.Seconds()
		firstWindow = samples[first].At.Truncate(o.Window)
	}
	row.FloorS = firstWindow.Seconds() + max(0, windows-1)*o.Window.Seconds()
	row.AdmittedPerWindow = perWindow(samples, o.Window)
	return row
}

// perWindow is the fill each whole window reached: its last sample.
func perWindow(samples []Sample, w time.Duration) []float64 {
	var out []float64
	for i, s := range samples {
		if s.At < 0 {
			continue
		}
		last := i == len(samples)-1 || samples[i+1].At/w != s.At/w
		if last && i < len(samples)-1 {
			out = append(out, math.Round(s.Fraction*1000)/1000)
		}
	}
	return out
}

func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// Print writes rows as a table for people.
func Print(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-12s %6s %13s %5s %21s %18s %7s %8s %9s %8s %8s\n", "budget", "agents", "succeeded v/j", "429s", "429s by cause (t/r/a)", "fill per window", "wall s", "floor s", "start s", "step ms", "peak MB")
	for _, r := range rows {
		c := r.RateLimitedByCause
		fmt.Fprintf(w, "%-12s %6d %13s %5d %21s %18s %7.1f %8.1f %9.1f %8.0f %8.0f\n",
			r.Budget, r.Agents, fmt.Sprintf("%d (%d/%d)", r.Succeeded, r.Verified, r.Judged), r.RateLimited,
			fmt.Sprintf("%d/%d/%d", c["tokens"], c["requests"], c["adjustment"]),
			fills(r.AdmittedPerWindow), r.WallS, r.FloorS, r.StartupS, r.StepOverheadMSP50, r.PeakRSSMB)
	}
}

// fills writes the windows' fill from the first that admitted anything.
func fills(f []float64) string {
	var parts []string
	for _, x := range f {
		if len(parts) == 0 && x == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%.0f%%", 100*x))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
