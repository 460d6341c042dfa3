package main

import (
	"context"
	"errors"
	"io"

	"github.com/headroom-agent/headroom/agent"
)

// failed says err on stderr, as the named command's, and returns the exit
// code agent.ExitCauses gives it: every command ends on an error by the
// one table, so the same cause has the same code whichever command meets
// it. Wrap err with agent.Usage when what failed is what the user gave.
func failed(ctx context.Context, stderr io.Writer, command string, err error) int {
	fprintf(stderr, "headroom %s: %v\n", command, err)
	return agent.ExitCode(ctx, "", err)
}

// errInterrupted is what a command stopped by SIGINT or SIGTERM says; the
// table gives it its code from the context, whatever the error.
var errInterrupted = errors.New("interrupted")

// reported is the exit code of a command whose output already said what
// failed (doctor's findings, calibrate's rows, a check's lines): the
// table's, with nothing more on stderr.
func reported(ctx context.Context, what string) int {
	return agent.ExitCode(ctx, "", errors.New(what))
}
