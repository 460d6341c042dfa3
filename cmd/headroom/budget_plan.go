package main

import (
	"context"
	"io"
)

// budgetPlan is not built yet.
func budgetPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fprintf(stderr, "headroom budget plan: not built yet\n")
	return exitUsage
}
