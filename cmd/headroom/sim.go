package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// simFlags are sim's flags.
type simFlags struct {
	fs             *pflag.FlagSet
	addr           string
	deps, keys     listFlag
	file           string
	window         time.Duration
	refund         string
	reply          string
	outTokens      int
	latency        time.Duration
	perToken       time.Duration
	jitter         float64
	errRate        float64
	dropRate       float64
	seed           int64
	reqWindows     string
	tokWindow      string
	scale          float64
	noise          float64
	dispatch       time.Duration
	dispatchJitter float64
}

func runSim(fs *pflag.FlagSet) runner {
	f := &simFlags{fs: fs}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8089", "address to listen on")
	fs.Var(&f.deps, "serve", "serve a deployment `NAME:TPM[:RPM]` (repeatable); RPM defaults to 6 per 1,000 TPM")
	fs.StringVar(&f.file, "config", "", "the simulator's config `file`: resources, deployments, pools and adjustments (YAML)")
	fs.Var(&f.keys, "api-key", "accept only this `key` (repeatable); without it any non-empty key passes")
	fs.DurationVar(&f.window, "window", azuresim.DefaultWindow, "token window length; the 1 s and 10 s request windows scale with it")
	fs.StringVar(&f.refund, "refund", string(azuresim.Hold), "unused estimate: hold (kept for the window) or refund (given back on completion; release is its earlier name)")
	fs.StringVar(&f.reply, "reply", "echo", "reply behaviour of --serve deployments: echo, fixed or heuristic")
	fs.IntVar(&f.outTokens, "output-tokens", 0, "answer length of the fixed behaviour, in tokens (default 16)")
	fs.DurationVar(&f.latency, "latency", 0, "base latency of every call")
	fs.DurationVar(&f.perToken, "latency-per-token", 0, "extra latency per generated token")
	fs.Float64Var(&f.jitter, "jitter", 0, "latency spread, a fraction between 0 and 1")
	fs.Float64Var(&f.errRate, "error-rate", 0, "fraction of calls answered 500")
	fs.Float64Var(&f.dropRate, "drop-rate", 0, "fraction of admitted calls whose connection is dropped")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the random faults (0: from the clock)")
	// Rules a client cannot see, for --serve deployments.
	fs.StringVar(&f.reqWindows, "request-windows", string(azuresim.FixedWindow), "how --serve deployments count the 1 s and 10 s request windows: fixed (from multiples of their length) or sliding (the last length of time)")
	fs.StringVar(&f.tokWindow, "token-window", string(azuresim.FixedWindow), "how --serve deployments count the token window: fixed or sliding")
	fs.Float64Var(&f.scale, "estimate-scale", 1, "factor on what --serve deployments charge at admission over the character rule's estimate")
	fs.Float64Var(&f.noise, "estimate-noise", 0, "per-call spread of what --serve deployments charge at admission, a fraction between 0 and 1 (0.05: uniformly within ±5%, drawn from --seed)")
	fs.DurationVar(&f.dispatch, "dispatch-delay", 0, "how long after a call arrives --serve deployments count it (and may refuse it)")
	fs.Float64Var(&f.dispatchJitter, "dispatch-jitter", 0, "spread of --dispatch-delay, a fraction between 0 and 1")
	renamed(fs, "deployment", "serve")
	renamed(fs, "deployments", "config")
	return f.run
}

func (f *simFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := f.config()
	if err != nil {
		return failed(ctx, stderr, "sim", agent.Usage(err))
	}
	sim, err := azuresim.New(cfg, azuresim.Options{APIKeys: f.keys, Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		return failed(ctx, stderr, "sim", agent.Usage(err))
	}
	err = sim.Serve(ctx, f.addr, func(resourceAddr, bound string) {
		fprintf(stderr, "headroom sim: serving on http://%s: %s\n", bound, describe(sim, resourceAddr))
	})
	if err != nil {
		return failed(ctx, stderr, "sim", err)
	}
	fprintf(stderr, "headroom sim: stopped\n")
	return exitOK
}

// config is the simulator's config: the file's, the --serve deployments
// and the flags given; an error is bad usage.
func (f *simFlags) config() (azuresim.Config, error) {
	var cfg azuresim.Config
	if f.file != "" {
		var err error
		if cfg, err = azuresim.LoadConfig(f.file); err != nil {
			return cfg, err
		}
	}
	if !(f.scale > 0) {
		// 0 in a config means the default; given here it is a mistake.
		return cfg, fmt.Errorf("--estimate-scale: %v must be above 0", f.scale)
	}
	for _, s := range f.deps {
		d, err := azuresim.ParseDeploymentFlag(s)
		if err != nil {
			return cfg, fmt.Errorf("--serve: %v", err)
		}
		d.Reply, d.OutputTokens = f.reply, f.outTokens
		d.RequestWindows, d.TokenWindow = azuresim.WindowRule(f.reqWindows), azuresim.WindowRule(f.tokWindow)
		d.EstimateScale, d.EstimateNoise = f.scale, f.noise
		d.DispatchDelay, d.DispatchJitter = f.dispatch, f.dispatchJitter
		cfg.Deployments = append(cfg.Deployments, d)
	}
	// Flags given on the command line win over the file.
	f.override(&cfg)
	if len(cfg.Deployments) == 0 && len(cfg.Resources) == 0 {
		return cfg, errors.New("no deployments: give --serve NAME:TPM[:RPM] or --config FILE")
	}
	return cfg, nil
}

// override sets in cfg what the flags given on the command line say.
func (f *simFlags) override(cfg *azuresim.Config) {
	f.fs.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "window":
			cfg.Window = f.window
		case "refund":
			cfg.Refund = azuresim.RefundPolicy(f.refund)
		case "latency":
			cfg.Faults.Latency = f.latency
		case "latency-per-token":
			cfg.Faults.LatencyPerToken = f.perToken
		case "jitter":
			cfg.Faults.Jitter = f.jitter
		case "error-rate":
			cfg.Faults.ErrorRate = f.errRate
		case "drop-rate":
			cfg.Faults.DropRate = f.dropRate
		case "seed":
			cfg.Seed = f.seed
		}
	})
}

// describe lists what one address serves, for the start-up line. Keys are
// never printed.
func describe(sim *azuresim.Sim, addr string) string {
	var parts []string
	for _, st := range sim.Stats().Deployments {
		if sim.ResourceAddr(st.Resource) != addr {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s%s (%d TPM, %d RPM)", sim.ResourcePrefix(st.Resource), "/"+st.Deployment, st.TPM, st.RPM))
	}
	return fmt.Sprintf("%s; window %v", strings.Join(parts, ", "), sim.Window().Round(time.Millisecond))
}
