// Package learn measures learned runs: what a task costs when the model
// runs it, when it is replayed from what was learned, and on a site that
// changed since; and what a fleet on one template spends with learning
// on and off.
package learn

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// Options shape a measurement.
type Options struct {
	Tasks   string          // the directory of task files; those with a success check are measured
	Browser browser.Options // the browser every run starts from
	Runs    int             // runs of each kind per task, the median reported; 3 when 0
	// Pace is how fast the stand-in answers: a deployed model's latency,
	// so that run 1's wall time holds the model's as a real fleet's does.
	// The zero value answers at the stand-in's own speed.
	Pace azuresim.Faults
	// Progress gets a line per run.
	Progress func(format string, args ...any)
}

// Run is one run's figures.
type Run struct {
	Task    string `json:"task"`
	Run     string `json:"run"` // "model", "learned", or the variant's name
	Status  string `json:"status"`
	Calls   int    `json:"calls"`  // planning, click-pick and yes-no calls
	Tokens  int64  `json:"tokens"` // what those calls reserved
	Summary int    `json:"summary_calls"`
	// SummaryTokens is what the summary reserved, when one was made.
	SummaryTokens int64  `json:"summary_tokens"`
	WallMS        int64  `json:"wall_ms"`
	Replayed      int    `json:"replayed"`
	Asked         int    `json:"asked"`
	Saved         int64  `json:"tokens_saved"`
	Miss          string `json:"miss,omitempty"`
	MissDetail    string `json:"miss_detail,omitempty"`
	Stored        string `json:"stored,omitempty"`
	WaitedMS      int64  `json:"waited_ms,omitempty"`
}

// Measure runs every task with a success check Runs times with the
// model, each into a store of its own (a directory, as one machine keeps
// it), and Runs times from what the last of them learned, reporting the
// median of each by wall time: side by side, so the two are measured on
// the same machine at the same load.
func Measure(ctx context.Context, o Options) ([]Run, error) {
	if o.Runs <= 0 {
		o.Runs = 3
	}
	files, err := filepath.Glob(filepath.Join(o.Tasks, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var rows []Run
	for _, f := range files {
		t, err := agent.LoadTask(f)
		if err != nil {
			if filepath.Base(f) == "fleet.yaml" {
				continue // a task list, not a task
			}
			return nil, err
		}
		if t.Success == nil {
			continue
		}
		r, err := measureTask(ctx, t, o)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// measureTask is one task's median run with the model and its median
// replay.
func measureTask(ctx context.Context, t *agent.Task, o Options) ([]Run, error) {
	var firsts, replays []Run
	var lib *learned.Library
	for range o.Runs {
		if lib != nil {
			lib.Close()
		}
		var done func()
		var err error
		if lib, done, err = dirLibrary(); err != nil {
			return nil, err
		}
		defer done()
		firsts = append(firsts, runOnce(ctx, t, lib, nil, o, "model"))
	}
	defer lib.Close()
	for range o.Runs {
		replays = append(replays, runOnce(ctx, t, lib, nil, o, "learned"))
	}
	return []Run{median(firsts), median(replays)}, ctx.Err()
}

// dirLibrary is a library in a directory of its own, and how to remove
// it.
func dirLibrary() (*learned.Library, func(), error) {
	dir, err := os.MkdirTemp("", "headroom-bench-learn-")
	if err != nil {
		return nil, nil, err
	}
	d, err := learned.NewDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return learned.NewLibrary(d, learned.Options{}), func() { os.RemoveAll(dir) }, nil
}

// median is the run of median wall time.
func median(runs []Run) Run {
	runs = slices.Clone(runs)
	sort.Slice(runs, func(a, b int) bool { return runs[a].WallMS < runs[b].WallMS })
	return runs[len(runs)/2]
}

// runOnce runs the task on the library and counts its calls.
func runOnce(ctx context.Context, t *agent.Task, lib *learned.Library, ps map[string]string, o Options, name string) Run {
	to := agent.TaskOptions{Learned: lib, Params: ps, Browser: o.Browser}
	if o.Pace != (azuresim.Faults{}) && t.Cassette == "" {
		c, err := embedded.OpenPaced(ctx, o.Pace, llm.Options{})
		if err != nil {
			return Run{Task: t.Name, Run: name, Status: "error: " + err.Error()}
		}
		defer c.Close()
		to.Caller = c
	}
	res, err := agent.RunTask(ctx, t, to)
	r := count(res)
	r.Task, r.Run = t.Name, name
	if err != nil && res.Status == agent.Errored {
		r.Status = "error: " + err.Error()
	}
	if o.Progress != nil {
		o.Progress("%s %s: %s, %d calls, %d tokens, %.1f s", r.Task, r.Run, r.Status, r.Calls, r.Tokens, float64(r.WallMS)/1000)
	}
	return r
}

// count is a result's figures: the calls that choose and check steps
// apart from a summary, which an answer may still need.
func count(res agent.Result) Run {
	r := Run{Status: string(res.Status), WallMS: res.Totals.ElapsedMS, Saved: res.Totals.TokensSaved}
	for _, c := range res.Calls {
		if c.Type == calltypes.Summarize {
			r.Summary++
			r.SummaryTokens += c.TokensReserved
			continue
		}
		r.Calls++
		r.Tokens += c.TokensReserved
	}
	for _, s := range res.Steps {
		for _, c := range s.Calls {
			r.Calls++
			r.Tokens += c.TokensReserved
		}
	}
	if l := res.Learned; l != nil {
		r.Replayed, r.Asked, r.Miss, r.MissDetail, r.Stored, r.WaitedMS = l.Replayed, l.Asked, l.Miss, l.MissDetail, l.Stored, l.WaitedMS
	}
	return r
}
