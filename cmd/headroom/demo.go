package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/config"
)

// demoTask is the task make demo runs: a recorded page, replayed offline.
const demoTask = "testdata/tasks/shop-cheapest-desk.yaml"

// runDemo runs one agent offline: a task from testdata/tasks on its
// recorded pages, with the embedded default (the simulator and its
// heuristic stand-in in this process, the in-memory budget), writing the
// result and the report to --out. It needs no network, no key, no config.
func runDemo(fs *pflag.FlagSet) runner {
	task := fs.String("task", demoTask, "the task `file` to run (run from the repository's root for the default)")
	out := fs.String("out", "demo-out", "write result.json, report.html and the screenshots into this `directory`")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if _, err := os.Stat(*task); err != nil {
			fprintf(stderr, "headroom demo: %v: run it from the repository's root, or name a task with --task\n", err)
			return exitUsage
		}
		// The demo is the embedded default whatever the environment says.
		os.Unsetenv(config.Env)
		return run(ctx, []string{"run", "--out", *out, "--", *task}, stdout, stderr)
	}
}
