package main

import (
	"context"
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
