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

func runSim(fs *pflag.FlagSet) runner {
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on")
	var deps, keys listFlag
	fs.Var(&deps, "serve", "serve a deployment `NAME:TPM[:RPM]` (repeatable); RPM defaults to 6 per 1,000 TPM")
	file := fs.String("config", "", "the simulator's config `file`: resources, deployments, pools and adjustments (YAML)")
	fs.Var(&keys, "api-key", "accept only this `key` (repeatable); without it any non-empty key passes")
	window := fs.Duration("window", azuresim.DefaultWindow, "token window length; the 1 s and 10 s request windows scale with it")
	refund := fs.String("refund", string(azuresim.Hold), "unused estimate: hold (kept for the window) or refund (given back on completion; release is its earlier name)")
	reply := fs.String("reply", "echo", "reply behaviour of --serve deployments: echo, fixed or heuristic")
	outTokens := fs.Int("output-tokens", 0, "answer length of the fixed behaviour, in tokens (default 16)")
	latency := fs.Duration("latency", 0, "base latency of every call")
	perToken := fs.Duration("latency-per-token", 0, "extra latency per generated token")
	jitter := fs.Float64("jitter", 0, "latency spread, a fraction between 0 and 1")
	errRate := fs.Float64("error-rate", 0, "fraction of calls answered 500")
	dropRate := fs.Float64("drop-rate", 0, "fraction of admitted calls whose connection is dropped")
	seed := fs.Int64("seed", 0, "seed of the random faults (0: from the clock)")
	// Rules a client cannot see, for --serve deployments.
	reqWindows := fs.String("request-windows", string(azuresim.FixedWindow), "how --serve deployments count the 1 s and 10 s request windows: fixed (from multiples of their length) or sliding (the last length of time)")
	tokWindow := fs.String("token-window", string(azuresim.FixedWindow), "how --serve deployments count the token window: fixed or sliding")
	scale := fs.Float64("estimate-scale", 1, "factor on what --serve deployments charge at admission over the character rule's estimate")
	noise := fs.Float64("estimate-noise", 0, "per-call spread of what --serve deployments charge at admission, a fraction between 0 and 1 (0.05: uniformly within ±5%, drawn from --seed)")
	dispatch := fs.Duration("dispatch-delay", 0, "how long after a call arrives --serve deployments count it (and may refuse it)")
	dispatchJitter := fs.Float64("dispatch-jitter", 0, "spread of --dispatch-delay, a fraction between 0 and 1")
	renamed(fs, "deployment", "serve")
	renamed(fs, "deployments", "config")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		var cfg azuresim.Config
		if *file != "" {
			var err error
			if cfg, err = azuresim.LoadConfig(*file); err != nil {
				return failed(ctx, stderr, "sim", agent.Usage(err))
			}
		}
		if !(*scale > 0) {
			// 0 in a config means the default; given here it is a mistake.
			return failed(ctx, stderr, "sim", agent.Usage(fmt.Errorf("--estimate-scale: %v must be above 0", *scale)))
		}
		for _, s := range deps {
			d, err := azuresim.ParseDeploymentFlag(s)
			if err != nil {
				return failed(ctx, stderr, "sim", agent.Usage(fmt.Errorf("--serve: %v", err)))
			}
			d.Reply, d.OutputTokens = *reply, *outTokens
			d.RequestWindows, d.TokenWindow = azuresim.WindowRule(*reqWindows), azuresim.WindowRule(*tokWindow)
			d.EstimateScale, d.EstimateNoise = *scale, *noise
			d.DispatchDelay, d.DispatchJitter = *dispatch, *dispatchJitter
			cfg.Deployments = append(cfg.Deployments, d)
		}
		// Flags given on the command line win over the file.
		fs.Visit(func(f *pflag.Flag) {
			switch f.Name {
			case "window":
				cfg.Window = *window
			case "refund":
				cfg.Refund = azuresim.RefundPolicy(*refund)
			case "latency":
				cfg.Faults.Latency = *latency
			case "latency-per-token":
				cfg.Faults.LatencyPerToken = *perToken
			case "jitter":
				cfg.Faults.Jitter = *jitter
			case "error-rate":
				cfg.Faults.ErrorRate = *errRate
			case "drop-rate":
				cfg.Faults.DropRate = *dropRate
			case "seed":
				cfg.Seed = *seed
			}
		})
		if len(cfg.Deployments) == 0 && len(cfg.Resources) == 0 {
			return failed(ctx, stderr, "sim", agent.Usage(errors.New("no deployments: give --serve NAME:TPM[:RPM] or --config FILE")))
		}
		sim, err := azuresim.New(cfg, azuresim.Options{APIKeys: keys, Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
		if err != nil {
			return failed(ctx, stderr, "sim", agent.Usage(err))
		}
		err = sim.Serve(ctx, *addr, func(resourceAddr, bound string) {
			fprintf(stderr, "headroom sim: serving on http://%s: %s\n", bound, describe(sim, resourceAddr))
		})
		if err != nil {
			return failed(ctx, stderr, "sim", err)
		}
		fprintf(stderr, "headroom sim: stopped\n")
		return exitOK
	}
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
