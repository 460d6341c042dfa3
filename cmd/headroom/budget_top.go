package main

import (
	"context"
	"io"
)

// budgetTop is not built yet.
func budgetTop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fprintf(stderr, "headroom budget top: not built yet\n")
	return exitUsage
}
