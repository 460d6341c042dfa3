package main

import (
	"context"
	"io"
	"sort"
	"strings"
)

// budgetCommands are the subcommands of headroom budget: the fleet's
// budget seen from outside any one agent.
func budgetCommands() map[string]struct {
	summary string
	run     func(context.Context, []string, io.Writer, io.Writer) int
} {
	return map[string]struct {
		summary string
		run     func(context.Context, []string, io.Writer, io.Writer) int
	}{
		"plan":      {"how many agents a budget feeds, and how fast to start them", budgetPlan},
		"doctor":    {"check a config before a fleet starts (--probe asks each deployment)", budgetDoctor},
		"top":       {"a live view of the shared store, per deployment", budgetTop},
		"calibrate": {"measure whether Azure gives back unused estimate (refund or hold), with a few cheap calls", budgetCalibrate},
	}
}

// runBudget dispatches headroom budget SUBCOMMAND.
func runBudget(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	subs := budgetCommands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w, code := stderr, exitUsage
		if len(args) > 0 {
			w, code = stdout, exitOK
		}
		names := make([]string, 0, len(subs))
		for n := range subs {
			names = append(names, n)
		}
		sort.Strings(names)
		fprintf(w, "Usage: headroom budget COMMAND [flags]\n\n")
		for _, n := range names {
			fprintf(w, "\t%-10s %s\n", n, subs[n].summary)
		}
		fprintf(w, "\nRun \"headroom budget COMMAND -h\" for its flags.\n")
		return code
	}
	sub, ok := subs[args[0]]
	if !ok {
		names := make([]string, 0, len(subs))
		for n := range subs {
			names = append(names, n)
		}
		sort.Strings(names)
		fprintf(stderr, "headroom budget: unknown command %q (have: %s)\n", args[0], strings.Join(names, ", "))
		return exitUsage
	}
	return sub.run(ctx, args[1:], stdout, stderr)
}
