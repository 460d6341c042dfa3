// Command headroom runs browser-automation agents that share one LLM budget.
//
// Usage:
//
//	headroom COMMAND [flags]
//
// Run "headroom help" for the commands.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
)

// Exit codes, the same for every command: agent.ExitCauses is the table
// from cause to code, which agent.ExitCode reads.
const (
	exitOK          = agent.ExitOK
	exitFailed      = agent.ExitFailed
	exitUsage       = agent.ExitUsage
	exitBudget      = agent.ExitBudget
	exitBrowser     = agent.ExitBrowser
	exitInterrupted = agent.ExitInterrupted
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runner is a command's work once its flags are parsed: it gets the
// positional arguments and returns the exit code.
type runner func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// command is one subcommand: flags declares its flags on the set and
// returns its runner, so help and completion know the flags without
// running anything.
type command struct {
	use     string // the name, then the arguments as the usage line shows them
	summary string
	args    cobra.PositionalArgs
	flags   func(*pflag.FlagSet) runner
	subs    []command // a group: headroom budget, headroom bench
	hidden  bool      // started by another command, not by people
	// complete offers values for the positional arguments.
	complete cobra.CompletionFunc
	example  string // shown under Examples in the command's help
}

func commands() []command {
	return []command{
		{use: "run [TASK]", summary: "run one agent on a task file (or one of a --tasks list) and print its result", args: maxArgs(1, "TASK"), flags: runTask,
			example: "  headroom run testdata/tasks/shop-oak-desk-cart.yaml --out out\n  headroom run --tasks tasks.yaml --index 3 --config headroom.yaml"},
		{use: "record URL", summary: "record a page (and scripted steps on it) as a HAR file for offline replay", args: exactArgs("URL"), flags: runRecord,
			example: "  headroom testsite &\n  headroom record http://127.0.0.1:8391/shop/ --out shop.har --steps testdata/pages/shop.steps.yaml"},
		{use: "observe [URL]", summary: "print what an agent sees of a page, live or replayed from a HAR file", args: maxArgs(1, "URL"), flags: runObserve,
			example: "  headroom observe https://example.com/\n  headroom observe --har testdata/pages/shop.har"},
		{use: "testsite", summary: "serve the recorded test sites (testdata/pages) to record, observe or run against", args: noArgs, flags: runTestsite},
		{use: "sim", summary: "serve a simulated Azure OpenAI endpoint with Azure's rate limits", args: noArgs, flags: runSim,
			example: "  headroom sim --serve gpt4o:60000 --serve mini:200000:1200\n  headroom sim --config sim.yaml --refund refund"},
		{use: "calltypes", summary: "list the call types and their caps", args: noArgs, flags: runCalltypes},
		{use: "actions", summary: "list the actions a model may pick, as it is told them", args: noArgs, flags: runActions},
		{use: "call TYPE", summary: "run one call of a call type and print its record", args: exactArgs("TYPE"), flags: runCall, complete: completeCallTypes,
			example: "  headroom call yes-no --input calltypes/examples/yes-no.json"},
		{use: "learned", summary: "the learned runs a store holds: ls, show, rm", subs: learnedCommands()},
		{use: "budget", summary: "the fleet's budget: plan, doctor, top, exporter, calibrate", subs: budgetCommands()},
		{use: "bench", summary: "measure: store, burst, fleet, coldstart, caps, pageview, agents, learn", subs: benchCommands()},
		{use: "demo", summary: "run the offline demo against the embedded simulator", args: noArgs, flags: runDemo},
		{use: "version", summary: "print the version", args: noArgs, flags: runVersion},
	}
}

func budgetCommands() []command {
	return []command{
		{use: "plan", summary: "how many agents a budget feeds, and how fast to start them", args: noArgs, flags: budgetPlan},
		{use: "doctor", summary: "check a config before a fleet starts (--probe asks each deployment)", args: noArgs, flags: budgetDoctor},
		{use: "top", summary: "a live view of the shared store, per deployment", args: noArgs, flags: budgetTop},
		{use: "exporter", summary: "serve the whole fleet's metrics from the shared store, one scrape target", args: noArgs, flags: budgetExporter,
			example: "  headroom budget exporter --config headroom.yaml --addr :9464"},
		{use: "calibrate", summary: "measure whether Azure gives back unused estimate (refund or hold), with a few cheap calls", args: noArgs, flags: budgetCalibrate},
	}
}

func benchCommands() []command {
	return []command{
		{use: "learn", summary: "learned runs: each task run by the model and replayed, the shop's variants, a fleet with learning on and off", args: noArgs, flags: benchLearn},
		{use: "store", summary: "reserve+settle throughput and latency of the budget store", args: noArgs, flags: benchStore},
		{use: "burst", summary: "90 simultaneous chat completions at one 60 RPM deployment, per client strategy", args: noArgs, flags: benchBurst},
		{use: "fleet", summary: "a cold-start fleet of processes sharing Redis, routing strategies side by side", args: noArgs, flags: benchFleet},
		{use: "coldstart", summary: "many headroom call processes at once against sliding request windows, fixed and learned pacing", args: noArgs, flags: benchColdstart},
		{use: "caps", summary: "each call type's charge with its own cap and with a flat 4,096", args: noArgs, flags: benchCaps},
		{use: "pageview", summary: "the page a model reads, the JSON page of before against each call type's view, per page and per task step", args: noArgs, flags: benchPageview},
		{use: "agents", summary: "real agents (headroom run, Chromium) sharing one Redis budget, against per-process budgets", args: noArgs, flags: benchAgents},
		{use: "fleet-worker", summary: "one process of bench fleet (its spec on standard input)", args: noArgs, flags: benchFleetWorker, hidden: true},
		{use: "agents-worker", summary: "several agents of bench agents in one process", args: noArgs, flags: benchAgentsWorker, hidden: true},
	}
}
