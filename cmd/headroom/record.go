package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// recordFlags are record's flags, read when the command runs.
type recordFlags struct {
	out    string
	keep   listFlag
	bf     browserFlags
	shots  string
	asJSON bool
}

// runRecord loads a page, takes optional scripted steps, and writes what
// the page fetched as a HAR file that replay serves offline.
func runRecord(fs *pflag.FlagSet) runner {
	f := &recordFlags{}
	fs.StringVar(&f.out, "out", "", "HAR `file` to write (required)")
	fs.Var(&f.keep, "keep-name", "record this header, query parameter or body field `name` as it is, though it is redacted by default; repeat for more")
	fs.Var(&f.keep, "keep-header", "the same as --keep-name")
	fs.Var(&f.bf.redact, "redact-header", "the same as --redact-name")
	fs.StringVar(&f.shots, "screenshots", "", "save a PNG after every step in this `directory`")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	f.bf.add(fs)
	return f.run
}

// run records the page and its steps, writes the HAR and prints what it
// holds.
func (f *recordFlags) run(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
	start := pos[0]
	shown := replay.DefaultRedactor().URL(start) // what is printed: no secret parameters
	steps, code, ok := f.check(ctx, start, shown, stderr)
	if !ok {
		return code
	}
	red := replay.DefaultRedactor()
	for _, h := range f.keep {
		red.Keep(h)
	}
	rec := replay.NewRecorder(time.Now().UTC().Truncate(time.Second), red, "headroom", versionString())
	o := f.bf.options(stderr)
	o.Record = rec
	o.ScreenshotDir = f.shots
	fprintf(stderr, "headroom record: loading %s\n", shown)
	r, err := browser.Record(ctx, o, start, steps, f.shots)

	// What was recorded is written even when a step failed or the run
	// was interrupted: a partial recording still replays what it holds.
	n := rec.Len()
	if n > 0 || err == nil {
		if werr := rec.Archive().WriteFile(f.out); werr != nil {
			return failed(ctx, stderr, "record", fmt.Errorf("writing %s: %w", f.out, werr))
		}
	}
	return f.report(ctx, r, err, n, len(steps), shown, stdout, stderr)
}

// check reads the steps and checks the flags and the URL, making the
// screenshots' directory; what is wrong is said on stderr, and ok is
// false with the exit code.
func (f *recordFlags) check(ctx context.Context, start, shown string, stderr io.Writer) (steps []browser.Step, code int, ok bool) {
	steps, err := f.bf.load()
	if err != nil {
		return nil, failed(ctx, stderr, "record", agent.Usage(err)), false
	}
	if f.out == "" {
		fprintf(stderr, "headroom record: want --out FILE, the HAR file to write\n")
		hint(stderr, "record")
		return nil, exitUsage, false
	}
	if err := safefile.PrepareTarget(f.out); err != nil {
		return nil, failed(ctx, stderr, "record", agent.Usage(fmt.Errorf("--out: %w", err))), false
	}
	if u, err := url.Parse(start); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fprintf(stderr, "headroom record: %q is not an http(s) URL\n", shown)
		return nil, exitUsage, false
	}
	if err := checkPageHost(start); err != nil {
		fprintf(stderr, "headroom record: URL: %v\n", err)
		return nil, exitUsage, false
	}
	if f.shots != "" {
		if err := os.MkdirAll(f.shots, 0o755); err != nil {
			return nil, failed(ctx, stderr, "record", agent.Usage(fmt.Errorf("--screenshots: %w", err))), false
		}
	}
	return steps, exitOK, true
}

// report prints what was recorded, n requests of a run of nsteps steps
// that ended on err, and returns the command's exit code.
func (f *recordFlags) report(ctx context.Context, r *browser.Recording, err error, n, nsteps int, shown string, stdout, stderr io.Writer) int {
	summary := struct {
		URL        string   `json:"url"`
		Out        string   `json:"out"`
		Requests   int      `json:"requests"`
		Steps      int      `json:"steps"`
		Outcomes   []string `json:"outcomes,omitempty"`
		Title      string   `json:"title,omitempty"`
		Error      string   `json:"error,omitempty"`
		Refused    []string `json:"refused,omitempty"`
		ClosedTabs []string `json:"closed_tabs,omitempty"`
	}{URL: shown, Out: f.out, Requests: n, Steps: nsteps}
	if r != nil {
		summary.Title = r.Title
		summary.Refused, summary.ClosedTabs = r.Refused, r.ClosedTabs
		reportFence(stderr, "record", r.Refused, r.ClosedTabs, f.bf.verbose)
		if r.Closed != nil {
			fprintf(stderr, "headroom record: closing the browser: %v\n", r.Closed)
		}
		for _, o := range r.Outcomes {
			summary.Outcomes = append(summary.Outcomes, o.String())
		}
	}
	if err != nil {
		summary.Error = err.Error()
	}
	if f.asJSON {
		printJSON(stdout, summary)
	} else if n > 0 || err == nil {
		fprintf(stdout, "recorded %s from %s to %s\n", plural.Of(n, "request"), shown, f.out)
	}
	if err == nil {
		return exitOK
	}
	fprintf(stderr, "headroom record: %v\n", err)
	if n > 0 {
		fprintf(stderr, "headroom record: %s holds what was recorded before that\n", f.out)
	}
	return agent.ExitCode(ctx, "", err)
}
