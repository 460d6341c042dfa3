package main

import (
	"context"
	"encoding/json"
	"io"
)

// runBench dispatches headroom bench SUBCOMMAND.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	subs := map[string]func(context.Context, []string, io.Writer, io.Writer) int{
		"store":         benchStore,
		"burst":         benchBurst,
		"caps":          benchCaps,
		"fleet":         benchFleet,
		"fleet-worker":  benchFleetWorker, // one process of bench fleet
		"agents":        benchAgents,
		"agents-worker": benchAgentsWorker, // several agents of bench agents in one process
		"coldstart":     benchColdstart,
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w, code := stderr, exitUsage
		if len(args) > 0 {
			w, code = stdout, exitOK
		}
		fprintf(w, "Usage: headroom bench BENCHMARK [flags]\n\n"+
			"\tstore   reserve+settle throughput and latency of the budget store\n"+
			"\tfleet   a cold-start fleet of processes sharing Redis, routing strategies side by side\n"+
			"\tburst   90 simultaneous chat completions at one 60 RPM deployment, per client strategy\n"+
			"\tcaps    each call type's charge with its own cap and with a flat 4,096\n"+
			"\tagents  real agents (headroom run, Chromium) sharing one Redis budget, against per-process budgets\n"+
			"\tcoldstart  many headroom call processes at once against sliding request windows, fixed and learned pacing\n"+
			"\nRun \"headroom bench BENCHMARK -h\" for its flags.\n")
		return code
	}
	sub, ok := subs[args[0]]
	if !ok {
		fprintf(stderr, "headroom bench: unknown benchmark %q (have: store, fleet, burst, caps, agents, coldstart)\n", args[0])
		return exitUsage
	}
	return sub(ctx, args[1:], stdout, stderr)
}

// printJSON writes v indented, for machines.
func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitFailed
	}
	return exitOK
}
