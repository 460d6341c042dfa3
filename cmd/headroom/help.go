package main

import (
	"context"
	"fmt"
	"io"
)

func usage(w io.Writer) {
	fprintf(w, "headroom runs browser-automation agents that share one Azure OpenAI budget.\n\n")
	fprintf(w, "Usage:\n\n\theadroom COMMAND [flags]\n\nCommands:\n\n")
	for _, c := range commands() {
		fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fprintf(w, "\nRun \"headroom COMMAND -h\" for a command's flags.\n")
	fprintf(w, "\nExit codes: 0 success, 1 failed, 2 bad usage or config, 3 no budget in time,\n4 browser failure, 130 interrupted.\n")
}

func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		usage(stdout)
		return exitOK
	case 1:
		for _, c := range commands() {
			if c.name == args[0] && c.name != "help" {
				return c.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		fprintf(stderr, "headroom help: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	default:
		fprintf(stderr, "usage: headroom help [COMMAND]\n")
		return exitUsage
	}
}

// fprintf writes to a terminal or pipe; a failed write there has nowhere
// better to be reported.
func fprintf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
