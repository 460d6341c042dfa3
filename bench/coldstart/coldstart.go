// Package coldstart starts many separate `headroom call` processes at
// once, one Redis between them, against three simulated deployments whose
// request windows slide and whose server counts each call a jittered
// moment after it arrives, and counts the 429s they draw. Processes, not
// goroutines: their start-up and the scheduler's choices are part of the
// lag between an admission and the server counting the call, and so part
// of what pacing must allow for. Stalls stop each process now and then,
// as a host packed with containers does.
package coldstart

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/learning"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// Modes, in the order they run: today's fixed pacing, then the learned one.
var Modes = []string{"fixed", "learned"}

// Options shape a run. The zero value of each field has a default.
type Options struct {
	Processes int    // default 200
	Redis     string // required: the URL every process shares
	Modes     []string
	// Deployments default to three at 600, 300 and 300 RPM (10, 5 and 5
	// calls a second), with tokens to spare: the request windows bind.
	Deployments []Deployment
	// DispatchDelay is the simulator's delay between a call's arrival and
	// its counting (default 20ms), spread by ± DispatchJitter of itself
	// (default 0.5).
	DispatchDelay  time.Duration
	DispatchJitter float64
	// DispatchTail, when above 0, draws the delay from a starved host's
	// long tail instead: a lognormal with median DispatchDelay and this
	// spread, at most DispatchMax (default 20 × the delay); see
	// azuresim.Deployment.DispatchTail.
	DispatchTail float64
	DispatchMax  time.Duration
	// Stalls starve each client process as a packed host does, stopping
	// it now and then at any point of its call; the zero value none.
	Stalls Stalls
	// ColdLag is the learned mode's pacing allowance before anything is
	// measured (calibration.cold_lag); 0 keeps the default.
	ColdLag time.Duration
	// Binary is the headroom executable to start.
	Binary   string
	Dir      string // for the config and input files; default a temporary one
	Progress io.Writer
}

// Deployment is one simulated deployment.
type Deployment struct {
	Name string `json:"name"`
	RPM  int64  `json:"rpm"`
}

// Row is one mode's result.
type Row struct {
	Mode      string `json:"mode"`
	Processes int    `json:"processes"`
	Succeeded int    `json:"succeeded"`
	// RateLimited is the 429s the server sent, by cause; CallsRateLimited
	// the processes whose call met at least one (every call may still
	// succeed, through retries).
	RateLimited      int64            `json:"rate_limited"`
	RateLimitedBy    map[string]int64 `json:"rate_limited_by_cause"`
	CallsRateLimited int              `json:"calls_rate_limited"`
	// WallMS is from the first process's start to the last one's exit;
	// FloorMS the least time the request windows allow the calls.
	WallMS  int64 `json:"wall_ms"`
	FloorMS int64 `json:"floor_ms"`
	// AdmitMS is from the first call the server counted to the last: the
	// time the pacing took to admit the cold start, against FloorMS. The
	// wall time adds the processes' start-up and their answers.
	AdmitMS int64 `json:"admit_ms"`
	// LatencyP50MS and LatencyP99MS are the calls' own (their reports').
	LatencyP50MS int64 `json:"latency_p50_ms"`
	LatencyP99MS int64 `json:"latency_p99_ms"`
	// SendLagP99MS and SendLagMaxMS are from the budget admitting each
	// process's last request to the request leaving it: the lag the
	// pacing allows for, as the processes lived it.
	SendLagP99MS int64 `json:"send_lag_p99_ms"`
	SendLagMaxMS int64 `json:"send_lag_max_ms"`
	// ServerLagMaxMS is the longest the simulator took to count a call
	// past its dispatch delay (azuresim.Stats.CountLagMax): a server the
	// clients starved counts their calls late and bunched.
	ServerLagMaxMS int64 `json:"server_lag_max_ms"`
	// PastSendBy counts the requests that left after their send-by: the
	// process was stopped after its last check, in the instant before the
	// request left, where no check can reach; PastSendByMaxMS is the
	// longest such overrun.
	PastSendBy      int   `json:"past_send_by"`
	PastSendByMaxMS int64 `json:"past_send_by_max_ms"`
	// PacingAllowanceMS is the learned allowance per deployment at the
	// end (learned mode only).
	PacingAllowanceMS map[string]float64 `json:"pacing_allowance_ms,omitempty"`
	// Overflows are the request-window 429s, each read against what the
	// processes admitted and sent (the admission log); the simulator
	// keeps up to azuresim.MaxRefusals a deployment.
	Overflows []Overflow `json:"overflows,omitempty"`
}

func (o *Options) defaults() error {
	if o.Processes <= 0 {
		o.Processes = 200
	}
	if o.Redis == "" {
		return fmt.Errorf("coldstart: a Redis URL is required")
	}
	if len(o.Modes) == 0 {
		o.Modes = Modes
	}
	for _, m := range o.Modes {
		if !slices.Contains(Modes, m) {
			return fmt.Errorf("coldstart: unknown mode %q (have %v)", m, Modes)
		}
	}
	if len(o.Deployments) == 0 {
		o.Deployments = []Deployment{{"gpt4o-a", 600}, {"gpt4o-b", 300}, {"gpt4o-c", 300}}
	}
	if o.DispatchDelay == 0 {
		o.DispatchDelay = 20 * time.Millisecond
	}
	switch {
	case o.DispatchJitter == 0:
		o.DispatchJitter = 0.5
	case o.DispatchJitter < 0:
		o.DispatchJitter = 0
	}
	if o.Binary == "" {
		return fmt.Errorf("coldstart: the headroom binary is required")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return nil
}

// Run runs every mode in turn, each against a fresh simulator and a
// namespace of its own in Redis.
func Run(ctx context.Context, o Options) ([]Row, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "headroom-coldstart-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	}
	if !raisePriority() {
		fmt.Fprintf(o.Progress, "headroom bench coldstart: the simulator runs at the clients' priority or near it (raising it needs root or CAP_SYS_NICE): on a busy machine it may count calls late and bunched\n")
	}
	if pid, restore := raiseRedis(ctx, o.Redis); pid > 0 {
		defer restore()
		fmt.Fprintf(o.Progress, "headroom bench coldstart: the Redis server on this machine (pid %d) runs at nice %d or above while the bench runs, above the clients\n", pid, serverNice)
	} else if loopback(hostOf(o.Redis)) {
		fmt.Fprintf(o.Progress, "headroom bench coldstart: the Redis server on this machine keeps its priority (raising it needs root or CAP_SYS_NICE, and the server in this PID namespace): with hundreds of clients it may answer their first round trips late\n")
	}
	var rows []Row
	for _, m := range o.Modes {
		fmt.Fprintf(o.Progress, "headroom bench coldstart: %s: %s at once…\n", m, plural.Of(o.Processes, "process/processes"))
		row, err := runOne(ctx, o, m)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", m, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// tokens per minute on every deployment: far more than the calls need,
// so only the request windows bind.
const tpm = 10_000_000

func runOne(ctx context.Context, o Options, mode string) (Row, error) {
	simCfg := azuresim.Config{Seed: 1, Faults: azuresim.Faults{Latency: 50 * time.Millisecond}}
	for _, d := range o.Deployments {
		simCfg.Deployments = append(simCfg.Deployments, azuresim.Deployment{
			Name: d.Name, Model: "gpt-4o", TPM: tpm, RPM: d.RPM, Reply: "heuristic",
			RequestWindows: azuresim.SlidingWindow, TokenWindow: azuresim.SlidingWindow,
			DispatchDelay: o.DispatchDelay, DispatchJitter: o.DispatchJitter,
			DispatchTail: o.DispatchTail, DispatchMax: o.DispatchMax,
		})
	}
	sim, err := azuresim.New(simCfg, azuresim.Options{Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		return Row{}, err
	}
	srv, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return Row{}, err
	}
	defer srv.Close()

	cfgFile, inFile, err := writeFiles(o, mode, srv.URL)
	if err != nil {
		return Row{}, err
	}
	type result struct {
		ok          bool
		rateLimited int
		latency     int64
		sent        sent
	}
	results := make([]result, o.Processes)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range o.Processes {
		wg.Go(func() {
			// The clients yield to the simulator and Redis, which stand
			// for Azure and a store that do not share the clients' cores;
			// the clients' start-up and scheduling still jitter.
			cmd := niceCommand(ctx, o.Binary, "call", "yes-no", "--config", cfgFile, "--input", inFile)
			cmd.Env = append(os.Environ(), "HEADROOM_COLDSTART_KEY=coldstart")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := run(cmd, o.Stalls, uint64(i))
			if err != nil {
				fmt.Fprintf(o.Progress, "headroom bench coldstart: process %d: %v: %s", i, err, errb.Bytes())
				return
			}
			var rep struct {
				Deployment  string    `json:"deployment"`
				RateLimited int       `json:"rate_limited"`
				LatencyMS   int64     `json:"latency_ms"`
				AdmittedAt  time.Time `json:"admitted_at"`
				SentAt      time.Time `json:"sent_at"`
				SendBy      time.Time `json:"send_by"`
			}
			if json.Unmarshal(out.Bytes(), &rep) == nil {
				results[i] = result{ok: true, rateLimited: rep.RateLimited, latency: rep.LatencyMS,
					sent: sent{deployment: rep.Deployment, admitted: rep.AdmittedAt, wentAt: rep.SentAt, by: rep.SendBy}}
			}
		})
	}
	wg.Wait()
	row := Row{Mode: mode, Processes: o.Processes, WallMS: time.Since(start).Milliseconds(), FloorMS: floor(o),
		RateLimitedBy: map[string]int64{"tokens": 0, "requests": 0}}
	var lat []int64
	var calls []sent
	for _, r := range results {
		if !r.ok {
			continue
		}
		calls = append(calls, r.sent)
		row.Succeeded++
		if r.rateLimited > 0 {
			row.CallsRateLimited++
		}
		lat = append(lat, r.latency)
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		row.LatencyP50MS, row.LatencyP99MS = lat[n/2], lat[min(n-1, n*99/100)]
	}
	snap := sim.Stats()
	var first, last time.Time
	for _, st := range snap.Deployments {
		if !st.FirstAccepted.IsZero() && (first.IsZero() || st.FirstAccepted.Before(first)) {
			first = st.FirstAccepted
		}
		if st.LastAccepted.After(last) {
			last = st.LastAccepted
		}
		row.ServerLagMaxMS = max(row.ServerLagMaxMS, st.CountLagMax.Milliseconds())
		row.RateLimited += st.RateLimited.Total()
		row.RateLimitedBy["tokens"] += st.RateLimited.Tokens
		row.RateLimitedBy["requests"] += st.RateLimited.Requests
	}
	if !first.IsZero() {
		row.AdmitMS = last.Sub(first).Milliseconds()
	}
	row.SendLagP99MS, row.SendLagMaxMS = sendLags(calls)
	row.PastSendBy, row.PastSendByMaxMS = pastSendBy(calls)
	row.Overflows = overflows(snap, calls, first)
	if mode == "learned" {
		row.PacingAllowanceMS, err = allowances(ctx, o, cfgFile)
		if err != nil {
			return row, err
		}
	}
	return row, nil
}

// sendLags is the 99th percentile and the longest of the calls' times
// from admission to sending.
func sendLags(calls []sent) (p99, longest int64) {
	var lags []int64
	for _, c := range calls {
		if !c.admitted.IsZero() && !c.wentAt.IsZero() {
			lags = append(lags, c.wentAt.Sub(c.admitted).Milliseconds())
		}
	}
	if len(lags) == 0 {
		return 0, 0
	}
	slices.Sort(lags)
	n := len(lags)
	return lags[min(n-1, n*99/100)], lags[n-1]
}

// pastSendBy counts the calls sent after their send-by, and the longest
// overrun.
func pastSendBy(calls []sent) (n int, longest int64) {
	for _, c := range calls {
		if !c.by.IsZero() && c.wentAt.After(c.by) {
			n++
			longest = max(longest, c.wentAt.Sub(c.by).Milliseconds())
		}
	}
	return n, longest
}

// run runs cmd, starved by stalls while it runs.
func run(cmd *exec.Cmd, stalls Stalls, seed uint64) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	starved := make(chan struct{})
	go func() {
		defer close(starved)
		stalls.starve(cmd.Process, seed, done)
	}()
	err := cmd.Wait()
	close(done)
	<-starved
	return err
}

// floor is the least time the calls need: spread over the deployments at
// their 1 s rates, the last call starts this long after the first.
func floor(o Options) int64 {
	var perSecond int64
	for _, d := range o.Deployments {
		perSecond += max(1, d.RPM/60)
	}
	return int64(o.Processes-1) * 1000 / perSecond
}

// writeFiles writes the mode's config, in a Redis namespace of its own,
// and the call's input.
func writeFiles(o Options, mode, endpoint string) (cfg, in string, err error) {
	c := map[string]any{
		"redis":        o.Redis,
		"redis_prefix": "coldstart-" + mode + "-" + budget.NewID(),
		"calibration":  map[string]any{"learn": mode == "learned", "cold_lag": o.ColdLag.String()},
	}
	var ds []map[string]any
	for _, d := range o.Deployments {
		ds = append(ds, map[string]any{
			"name": d.Name, "endpoint": endpoint, "deployment": d.Name, "model": "gpt-4o", "model_version": "2024-11-20",
			"tpm": tpm, "rpm": d.RPM, "auth": map[string]any{"api_key_env": "HEADROOM_COLDSTART_KEY"},
		})
	}
	c["deployments"] = ds
	b, err := json.Marshal(c) // JSON is YAML
	if err != nil {
		return "", "", err
	}
	cfg = filepath.Join(o.Dir, "config-"+mode+".yaml")
	if err := safefile.WriteBytes(cfg, b, 0o600); err != nil {
		return "", "", err
	}
	input, _ := calltypes.ExampleInput("yes-no")
	b, err = json.Marshal(input)
	if err != nil {
		return "", "", err
	}
	in = filepath.Join(o.Dir, "input.json")
	return cfg, in, safefile.WriteBytes(in, b, 0o600)
}

// allowances reads the learned pacing allowance of each deployment from
// the store the processes shared.
func allowances(ctx context.Context, o Options, cfgFile string) (map[string]float64, error) {
	f, _, err := config.Load(cfgFile)
	if err != nil {
		return nil, err
	}
	store, err := budget.OpenStore(ctx, &f.Budget)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	cs, ok := store.Calibrator()
	if !ok {
		return nil, nil
	}
	var names []string
	for _, d := range f.Budget.Deployments {
		names = append(names, d.QuotaKey)
	}
	got, err := cs.Calibrations(ctx, names...)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i, c := range got {
		out[f.Budget.Deployments[i].Name] = float64(c.Allowance(learning.Policy{})) / float64(time.Millisecond)
	}
	return out, nil
}

// Print writes rows as a table for people.
func Print(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-8s %9s %9s %6s %12s %15s %9s %9s %9s %9s %9s %13s %13s %14s %14s  %s\n", "mode", "processes", "succeeded", "429s", "by (t/r)", "calls met 429", "wall ms", "admit ms", "floor ms", "p50 ms", "p99 ms", "send lag p99", "send lag max", "past send-by", "server lag max", "pacing allowance")
	for _, r := range rows {
		allow := ""
		for _, d := range slices.Sorted(maps.Keys(r.PacingAllowanceMS)) {
			allow += fmt.Sprintf(" %s %.0fms", d, r.PacingAllowanceMS[d])
		}
		fmt.Fprintf(w, "%-8s %9d %9d %6d %12s %8d (%3.0f%%) %9d %9d %9d %9d %9d %13d %13d %14s %14d %s\n", r.Mode, r.Processes, r.Succeeded, r.RateLimited,
			fmt.Sprintf("%d/%d", r.RateLimitedBy["tokens"], r.RateLimitedBy["requests"]),
			r.CallsRateLimited, 100*float64(r.CallsRateLimited)/float64(max(1, r.Processes)), r.WallMS, r.AdmitMS, r.FloorMS, r.LatencyP50MS, r.LatencyP99MS, r.SendLagP99MS, r.SendLagMaxMS, fmt.Sprintf("%d (≤%d ms)", r.PastSendBy, r.PastSendByMaxMS), r.ServerLagMaxMS, allow)
		for _, o := range r.Overflows {
			fmt.Fprintf(w, "  429 on %s at %d ms: %d ms window of %d held calls counted over %d ms; %d admitted and %d sent in the window's length before it, longest admission-to-send %d ms; the simulator counted up to %d ms late\n",
				o.Deployment, o.AtMS, o.WindowMS, o.Limit, o.HeldSpanMS, o.Admitted, o.Sent, o.MaxLagMS, o.ServerLagMS)
		}
	}
}
