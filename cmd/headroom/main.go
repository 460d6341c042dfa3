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
)

// Exit codes, the same for every command.
const (
	exitOK          = 0   // success
	exitFailed      = 1   // the work ran and failed
	exitUsage       = 2   // bad usage, config or task file
	exitBudget      = 3   // budget could not be had in time
	exitBrowser     = 4   // browser failure
	exitInterrupted = 130 // stopped by a signal
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand. run gets the arguments after the command's
// name and returns the exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"run", "run one agent on a task file and print its result", runTask},
		{"record", "record a page (and scripted steps on it) as a HAR file for offline replay", runRecord},
		{"observe", "print what an agent sees of a page, live or replayed from a HAR file", runObserve},
		{"sim", "serve a simulated Azure OpenAI endpoint with Azure's rate limits", runSim},
		{"calltypes", "list the call types and their caps", runCalltypes},
		{"call", "run one call of a call type and print its record", runCall},
		{"budget", "the fleet's budget: budget plan, doctor, top, calibrate", runBudget},
		{"bench", "measure: bench store, bench burst, bench fleet, bench caps, bench agents", runBench},
		{"demo", "run the offline demo against the embedded simulator", runDemo},
		{"version", "print the version", runVersion},
		{"help", "show help for headroom or one command", runHelp},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fprintf(stderr, "headroom: unknown command %q\n\n", name)
	usage(stderr)
	return exitUsage
}
