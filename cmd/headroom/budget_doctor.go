package main

import (
	"context"
	"io"
)

// budgetDoctor is not built yet.
func budgetDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fprintf(stderr, "headroom budget doctor: not built yet\n")
	return exitUsage
}
