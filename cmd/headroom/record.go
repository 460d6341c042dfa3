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

// runRecord loads a page, takes optional scripted steps, and writes what
// the page fetched as a HAR file that replay serves offline.
func runRecord(fs *pflag.FlagSet) runner {
	out := fs.String("out", "", "HAR `file` to write (required)")
	var keep listFlag
	var bf browserFlags
	fs.Var(&keep, "keep-name", "record this header, query parameter or body field `name` as it is, though it is redacted by default; repeat for more")
	fs.Var(&keep, "keep-header", "the same as --keep-name")
	fs.Var(&bf.redact, "redact-header", "the same as --redact-name")
	shots := fs.String("screenshots", "", "save a PNG after every step in this `directory`")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	bf.add(fs)
	return func(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
		steps, err := bf.load()
		if err != nil {
			return failed(ctx, stderr, "record", agent.Usage(err))
		}
		if *out == "" {
			fprintf(stderr, "headroom record: want --out FILE, the HAR file to write\n")
			hint(stderr, "record")
			return exitUsage
		}
		if err := safefile.PrepareTarget(*out); err != nil {
			return failed(ctx, stderr, "record", agent.Usage(fmt.Errorf("--out: %w", err)))
		}
		start := pos[0]
		shown := replay.DefaultRedactor().URL(start) // what is printed: no secret parameters
		if u, err := url.Parse(start); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fprintf(stderr, "headroom record: %q is not an http(s) URL\n", shown)
			return exitUsage
		}
		if err := checkPageHost(start); err != nil {
			fprintf(stderr, "headroom record: URL: %v\n", err)
			return exitUsage
		}
		if *shots != "" {
			if err := os.MkdirAll(*shots, 0o755); err != nil {
				return failed(ctx, stderr, "record", agent.Usage(fmt.Errorf("--screenshots: %w", err)))
			}
		}
		red := replay.DefaultRedactor()
		for _, h := range keep {
			red.Keep(h)
		}
		rec := replay.NewRecorder(time.Now().UTC().Truncate(time.Second), red, "headroom", versionString())
		o := bf.options(stderr)
		o.Record = rec
		o.ScreenshotDir = *shots
		fprintf(stderr, "headroom record: loading %s\n", shown)
		r, err := browser.Record(ctx, o, start, steps, *shots)

		// What was recorded is written even when a step failed or the run
		// was interrupted: a partial recording still replays what it holds.
		n := rec.Len()
		if n > 0 || err == nil {
			if werr := rec.Archive().WriteFile(*out); werr != nil {
				return failed(ctx, stderr, "record", fmt.Errorf("writing %s: %w", *out, werr))
			}
		}
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
		}{URL: shown, Out: *out, Requests: n, Steps: len(steps)}
		if r != nil {
			summary.Title = r.Title
			summary.Refused, summary.ClosedTabs = r.Refused, r.ClosedTabs
			reportFence(stderr, "record", r.Refused, r.ClosedTabs, bf.verbose)
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
		if *asJSON {
			printJSON(stdout, summary)
		} else if n > 0 || err == nil {
			fprintf(stdout, "recorded %s from %s to %s\n", plural.Of(n, "request"), shown, *out)
		}
		if err == nil {
			return exitOK
		}
		fprintf(stderr, "headroom record: %v\n", err)
		if n > 0 {
			fprintf(stderr, "headroom record: %s holds what was recorded before that\n", *out)
		}
		return agent.ExitCode(ctx, "", err)
	}
}
