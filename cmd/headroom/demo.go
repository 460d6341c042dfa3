package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// demoTask is the task make demo runs: a recorded page, replayed offline,
// with a success check, so that its second run can follow what the first
// learned.
const demoTask = "testdata/tasks/catalogue-walnut-cart.yaml"

// runDemo runs one agent offline, twice: a task from testdata/tasks on
// its recorded pages, with the embedded default (the simulator and its
// heuristic stand-in in this process, the in-memory budget). The first
// run asks the model and, its success verified, is learned; the second
// follows it with no model call. Each run's result and report go under
// --out, and a table sets the two side by side. It needs no network, no
// key, no config.
func runDemo(fs *pflag.FlagSet) runner {
	task := fs.String("task", demoTask, "the task `file` to run (run from the repository's root for the default)")
	out := fs.String("out", "demo-out", "write each run's result.json, report.html and screenshots under this `directory` (first/, second/)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if _, err := os.Stat(*task); err != nil {
			fprintf(stderr, "headroom demo: %v: run it from the repository's root, or name a task with --task\n", err)
			return exitUsage
		}
		// The demo is the embedded default whatever the environment says,
		// and starts with nothing learned.
		os.Unsetenv(config.Env)
		store := filepath.Join(*out, "learned")
		if err := os.RemoveAll(store); err != nil {
			fprintf(stderr, "headroom demo: %v\n", err)
			return exitFailed
		}
		var results []agent.Result
		for _, name := range []string{"first", "second"} {
			dir := filepath.Join(*out, name)
			fprintf(stderr, "headroom demo: the %s run\n", name)
			code := run(ctx, []string{"run", "--out", dir, "--learned", "dir:" + store, "--", *task}, io.Discard, stderr)
			if code != exitOK {
				return code
			}
			res, err := readResult(filepath.Join(dir, "result.json"))
			if err != nil {
				fprintf(stderr, "headroom demo: %v\n", err)
				return exitFailed
			}
			results = append(results, res)
		}
		// The first run's result, as a run prints it, then the two side by
		// side.
		printJSON(stdout, results[0])
		fprintf(stdout, "\n")
		printDemo(stdout, results[0], results[1])
		fprintf(stdout, "\nreports: %s and %s\n", filepath.Join(*out, "first", "report.html"), filepath.Join(*out, "second", "report.html"))
		return exitOK
	}
}

func readResult(path string) (agent.Result, error) {
	var res agent.Result
	b, err := safefile.ReadFile(path, 64<<20, "a result file")
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	return res, err
}

// printDemo sets the two runs side by side: what the model was asked,
// and what it cost.
func printDemo(w io.Writer, first, second agent.Result) {
	row := func(what string, a, b any) { fprintf(w, "%-22s %14v %14v\n", what, a, b) }
	row("", "first run", "second run")
	row("status", first.Status, second.Status)
	row("success by", first.SuccessBy, second.SuccessBy)
	row("steps", first.Totals.Steps, second.Totals.Steps)
	row("steps replayed", replayed(first), replayed(second))
	row("model calls", first.Totals.Calls, second.Totals.Calls)
	row("tokens reserved", first.Totals.TokensReserved, second.Totals.TokensReserved)
	row("tokens saved", first.Totals.TokensSaved, second.Totals.TokensSaved)
	row("wall time", fmt.Sprintf("%.1f s", float64(first.Totals.ElapsedMS)/1000), fmt.Sprintf("%.1f s", float64(second.Totals.ElapsedMS)/1000))
}

func replayed(r agent.Result) int {
	if r.Learned == nil {
		return 0
	}
	return r.Learned.Replayed
}
