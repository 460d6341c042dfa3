package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// Options shape a run. The zero value of each field has a default.
type Options struct {
	Agents      int           // default 400
	Processes   int           // default 4
	Redis       string        // required
	Window      time.Duration // the simulated minute; default 6s
	Windows     int           // how many windows the fleet runs; default 4
	Margin      float64       // default budget.DefaultMargin
	Strategies  []string      // default Strategies; any of Known
	Deployments []Deployment  // default 240k, 120k and 60k TPM
	// The server's hidden rules: what it charges for a call as a multiple
	// of the client's estimate (default 1), and whether its request and
	// token windows slide (default fixed).
	EstimateScale  float64
	RequestWindows azuresim.WindowRule
	TokenWindow    azuresim.WindowRule
	// Worker returns the command of one worker process; it reads a
	// WorkerSpec as JSON on stdin and prints a WorkerResult as JSON.
	Worker   func() *exec.Cmd
	Progress io.Writer
}

// Row is one strategy's result, as the simulator (the server) counted it.
type Row struct {
	Strategy string `json:"strategy"`
	// Calls is every call that was sent or failed; Completed those
	// answered. Shed calls (no room before the run's end, so never sent)
	// are counted apart.
	Calls     int64 `json:"calls"`
	Completed int64 `json:"completed"`
	Shed      int64 `json:"shed"`
	// RateLimited is the 429s the server sent, by cause.
	RateLimited        int64            `json:"rate_limited"`
	RateLimitedByCause map[string]int64 `json:"rate_limited_by_cause"`
	RateLimitedRate    float64          `json:"rate_limited_rate"` // per call
	// ThroughputFraction is the tokens admitted per window as a fraction
	// of Σ limit × margin; QuotaFraction as a fraction of the raw Σ limit.
	// WindowFills are each window's charged tokens ÷ Σ limit, and
	// SteadyQuotaFraction their mean over the second half of the run,
	// once a learning strategy has learned.
	ThroughputFraction  float64   `json:"throughput_fraction"`
	QuotaFraction       float64   `json:"quota_fraction"`
	WindowFills         []float64 `json:"window_fills"`
	SteadyQuotaFraction float64   `json:"steady_quota_fraction"`
	// SpreadPoints is the mean, over the run, of the gap between the
	// fullest and the emptiest deployment's share of its allowance used
	// this window, in percentage points.
	SpreadPoints float64         `json:"spread_points"`
	Deployments  []DeploymentRow `json:"deployments"`
	// Samples are the per-deployment fractions over time, for the plot;
	// Window and Margin are the run's, for its axes.
	Samples []Sample      `json:"-"`
	Window  time.Duration `json:"-"`
	Margin  float64       `json:"-"`
}

// DeploymentRow is one deployment's share of a run.
type DeploymentRow struct {
	Name        string  `json:"name"`
	TPM         int64   `json:"tpm"`
	Accepted    int64   `json:"accepted"`
	RateLimited int64   `json:"rate_limited"`
	Utilisation float64 `json:"utilisation"` // tokens admitted ÷ (windows × TPM × margin)
	// Refusals are its request-window 429s, from the simulator's log:
	// when, in which window, and how far apart the calls it held were
	// counted.
	Refusals []Refusal `json:"refusals,omitempty"`
}

// Refusal is one request-window 429 of a run.
type Refusal struct {
	AtMS       int64 `json:"at_ms"` // from the run's start
	WindowMS   int64 `json:"window_ms"`
	Limit      int64 `json:"limit"`
	HeldSpanMS int64 `json:"held_span_ms"`
}

// Sample is the fraction of each deployment's allowance (TPM × margin)
// held in the current window, at one instant.
type Sample struct {
	At        time.Duration
	Fractions []float64
	charged   int64 // every deployment's tokens charged so far
}

func (o *Options) defaults() {
	if o.Agents <= 0 {
		o.Agents = 400
	}
	if o.Processes <= 0 {
		o.Processes = 4
	}
	if o.Window <= 0 {
		o.Window = 6 * time.Second
	}
	if o.Windows <= 0 {
		o.Windows = 4
	}
	if o.Margin <= 0 {
		o.Margin = budget.DefaultMargin
	}
	if len(o.Strategies) == 0 {
		o.Strategies = Strategies
	}
	if len(o.Deployments) == 0 {
		o.Deployments = []Deployment{{"gpt4o-a", 240000}, {"gpt4o-b", 120000}, {"gpt4o-c", 60000}}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	// The worker processes' stderr is copied here from several goroutines.
	o.Progress = &lockedWriter{w: o.Progress}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Run runs every strategy in turn, each against a fresh simulator.
func Run(ctx context.Context, o Options) ([]Row, error) {
	o.defaults()
	var rows []Row
	for _, s := range o.Strategies {
		fmt.Fprintf(o.Progress, "headroom bench fleet: %s: %s in %s for %s of %v…\n", s, plural.Of(o.Agents, "agent"), plural.Of(o.Processes, "process/processes"), plural.Of(o.Windows, "window"), o.Window)
		row, err := runOne(ctx, o, s)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", s, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func runOne(ctx context.Context, o Options, strategy string) (Row, error) {
	simCfg := azuresim.Config{Window: o.Window, Seed: 1,
		Faults: azuresim.Faults{Latency: 120 * time.Millisecond, Jitter: 0.5}}
	for _, d := range o.Deployments {
		simCfg.Deployments = append(simCfg.Deployments, azuresim.Deployment{Name: d.Name, Model: "gpt-4o", TPM: d.TPM, Reply: "fixed", OutputTokens: 12,
			EstimateScale: o.EstimateScale, RequestWindows: o.RequestWindows, TokenWindow: o.TokenWindow})
	}
	sim, err := azuresim.New(simCfg, azuresim.Options{})
	if err != nil {
		return Row{}, err
	}
	srv, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return Row{}, err
	}
	defer srv.Close()

	// Start on a window boundary far enough ahead for the processes to
	// come up: every agent's first call lands in the same second.
	w := o.Window.Milliseconds()
	start := (time.Now().Add(1500*time.Millisecond).UnixMilli()/w + 1) * w
	end := start + int64(o.Windows)*w
	spec := WorkerSpec{
		Strategy: strategy, Endpoint: srv.URL, Deployments: o.Deployments,
		StartMS: start, EndMS: end, Redis: o.Redis, Prefix: "fleet:" + budget.NewID(),
		Window: o.Window.String(), Margin: o.Margin,
	}
	results := make([]WorkerResult, o.Processes)
	errs := make([]error, o.Processes)
	var wg sync.WaitGroup
	for p := range o.Processes {
		s := spec
		s.Agents = o.Agents / o.Processes
		if p < o.Agents%o.Processes {
			s.Agents++
		}
		s.Seed = uint64(p + 1)
		wg.Go(func() { results[p], errs[p] = runWorker(ctx, o, s) })
	}
	samples := sample(ctx, sim, o, start, end)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Row{}, err
		}
	}
	return summarize(strategy, o, sim.Stats(), results, samples, time.UnixMilli(start)), nil
}

// runWorker starts one worker process and reads its result.
func runWorker(ctx context.Context, o Options, spec WorkerSpec) (WorkerResult, error) {
	in, _ := json.Marshal(spec)
	cmd := o.Worker()
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = o.Progress
	cmd.Env = append(cmd.Environ(), "HEADROOM_FLEET_KEY=fleet")
	if err := cmd.Run(); err != nil {
		return WorkerResult{}, fmt.Errorf("worker: %w", err)
	}
	var r WorkerResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return WorkerResult{}, fmt.Errorf("worker printed %q: %w", out.String(), err)
	}
	return r, nil
}

// sample reads the simulator's windows until end.
func sample(ctx context.Context, sim *azuresim.Sim, o Options, startMS, endMS int64) []Sample {
	start := time.UnixMilli(startMS)
	time.Sleep(time.Until(start))
	tick := time.NewTicker(o.Window / 30)
	defer tick.Stop()
	var out []Sample
	for now := range tick.C {
		if now.UnixMilli() >= endMS || ctx.Err() != nil {
			break
		}
		s := Sample{At: now.Sub(start)}
		for _, st := range sim.Stats().Deployments {
			s.Fractions = append(s.Fractions, float64(st.WindowTokens)/(float64(st.TPM)*o.Margin))
			s.charged += st.TokensCharged
		}
		out = append(out, s)
	}
	return out
}

func summarize(strategy string, o Options, snap azuresim.Snapshot, results []WorkerResult, samples []Sample, began time.Time) Row {
	row := Row{Strategy: strategy, RateLimitedByCause: map[string]int64{"tokens": 0, "requests": 0, "adjustment": 0, "unknown": 0},
		Samples: samples, Window: o.Window, Margin: o.Margin}
	for _, r := range results {
		row.Calls += r.Completed + r.Failed
		row.Completed += r.Completed
		row.Shed += r.Shed
	}
	var admitted, allowance, quota float64
	for _, st := range snap.Deployments {
		quota += float64(st.TPM)
		rl := st.RateLimited
		row.RateLimited += rl.Total()
		row.RateLimitedByCause["tokens"] += rl.Tokens
		row.RateLimitedByCause["requests"] += rl.Requests
		row.RateLimitedByCause["adjustment"] += rl.Adjustment
		capTokens := float64(o.Windows) * float64(st.TPM) * o.Margin
		row.Deployments = append(row.Deployments, DeploymentRow{
			Name: st.Deployment, TPM: st.TPM, Accepted: st.Accepted, RateLimited: rl.Total(),
			Utilisation: float64(st.TokensCharged) / capTokens, Refusals: refusals(st, began),
		})
		admitted += float64(st.TokensCharged)
		allowance += capTokens
	}
	if row.Calls > 0 {
		row.RateLimitedRate = float64(row.RateLimited) / float64(row.Calls)
	}
	row.ThroughputFraction = admitted / allowance
	row.QuotaFraction = admitted / (quota * float64(o.Windows))
	row.WindowFills = windowFills(samples, o, quota, snap)
	if n := len(row.WindowFills); n > 0 {
		steady := row.WindowFills[n/2:]
		for _, f := range steady {
			row.SteadyQuotaFraction += f / float64(len(steady))
		}
	}
	var spread float64
	for _, s := range samples {
		lo, hi := s.Fractions[0], s.Fractions[0]
		for _, f := range s.Fractions {
			lo, hi = min(lo, f), max(hi, f)
		}
		spread += hi - lo
	}
	if len(samples) > 0 {
		row.SpreadPoints = 100 * spread / float64(len(samples))
	}
	return row
}

// refusals are a deployment's logged request-window 429s, timed from
// the run's start.
func refusals(st azuresim.Stats, began time.Time) []Refusal {
	var out []Refusal
	for _, r := range st.Refusals {
		x := Refusal{AtMS: r.At.Sub(began).Milliseconds(), WindowMS: r.Window.Milliseconds(), Limit: r.Limit}
		if len(r.Held) > 0 {
			x.HeldSpanMS = r.At.Sub(r.Held[0]).Milliseconds()
		}
		out = append(out, x)
	}
	return out
}

// windowFills is each window's charged tokens ÷ Σ limit, from the last
// sample of each window (the run's end closes the last one).
func windowFills(samples []Sample, o Options, quota float64, snap azuresim.Snapshot) []float64 {
	ends := make([]int64, o.Windows)
	for _, s := range samples {
		if i := int(s.At / o.Window); i >= 0 && i < o.Windows {
			ends[i] = s.charged
		}
	}
	var total int64
	for _, st := range snap.Deployments {
		total += st.TokensCharged
	}
	ends[o.Windows-1] = total
	fills := make([]float64, o.Windows)
	var prev int64
	for i, e := range ends {
		e = max(e, prev)
		fills[i] = float64(e-prev) / quota
		prev = e
	}
	return fills
}

// Print writes rows as a table for people.
func Print(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-22s %7s %9s %7s %26s %10s %10s %8s %8s  %s\n", "strategy", "calls", "completed", "429s", "429s by cause (t/r/a/u)", "429 rate", "tokens/win", "of quota", "steady", "spread  per-deployment use")
	for _, r := range rows {
		c := r.RateLimitedByCause
		per := ""
		for _, d := range r.Deployments {
			per += fmt.Sprintf(" %s %.0f%%", d.Name, 100*d.Utilisation)
		}
		fmt.Fprintf(w, "%-22s %7d %9d %7d %26s %9.2f%% %9.1f%% %7.1f%% %7.1f%% %5.1f pts %s\n",
			r.Strategy, r.Calls, r.Completed, r.RateLimited,
			fmt.Sprintf("%d/%d/%d/%d", c["tokens"], c["requests"], c["adjustment"], c["unknown"]),
			100*r.RateLimitedRate, 100*r.ThroughputFraction, 100*r.QuotaFraction, 100*r.SteadyQuotaFraction, r.SpreadPoints, per)
	}
}
