package main

import (
	"context"
	"io"
	"net/url"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/spf13/pflag"
)

// runObserve prints the snapshot an agent would get of a page: live, or
// replayed offline from a HAR file, after optional scripted steps.
func runObserve(fs *pflag.FlagSet) runner {
	harFile := fs.String("har", "", "replay the page from this HAR `file`, offline (URL defaults to its first page)")
	fuzzy := fs.Bool("fuzzy", false, "with --har, answer a request with no exact match by the recorded URL with the same path and most query parameters in common (logged)")
	maxTokens := fs.Int("snapshot-tokens", 2000, "cap the snapshot at this many `tokens` (estimated as characters/4)")
	renamed(fs, "max-tokens", "snapshot-tokens")
	asJSON := fs.Bool("json", false, "print the snapshot as JSON")
	var bf browserFlags
	bf.add(fs)
	return func(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
		steps, err := bf.load()
		if err != nil {
			fprintf(stderr, "headroom observe: %v\n", err)
			return exitUsage
		}
		if len(pos) == 0 && *harFile == "" {
			fprintf(stderr, "headroom observe: want a URL, or --har FILE\n")
			hint(stderr, "observe")
			return exitUsage
		}
		o := bf.options(stderr)
		o.Snapshot.MaxTokens = *maxTokens
		var m *replay.Matcher
		start := ""
		if len(pos) == 1 {
			start = pos[0]
		}
		if *harFile != "" {
			a, err := replay.Load(*harFile)
			if err != nil {
				fprintf(stderr, "headroom observe: %v\n", err)
				return exitUsage
			}
			m = replay.NewMatcher(a, replay.Options{Fuzzy: *fuzzy, Redactor: replay.DefaultRedactor()})
			o.Replay = m
			if start == "" {
				if start = browser.StartURL(a); start == "" {
					fprintf(stderr, "headroom observe: %s holds no page to start on\n", *harFile)
					return exitUsage
				}
			}
			if !harHas(a, start, *fuzzy) {
				fprintf(stderr, "headroom observe: %s has no entry for %s: give a URL it recorded\n", *harFile, replay.DefaultRedactor().URL(start))
				return exitUsage
			}
		}
		if !isHTTP(start) {
			fprintf(stderr, "headroom observe: %q is not an http(s) URL\n", replay.DefaultRedactor().URL(start))
			return exitUsage
		}
		p, err := browser.Open(ctx, o)
		if err != nil {
			fprintf(stderr, "headroom observe: %v\n", err)
			return browserExit(ctx, err)
		}
		defer p.Close()
		_, err = p.Walk(ctx, start, browser.Actions(steps, ".")...)
		var snap *browser.Snapshot
		if err == nil {
			snap, err = p.Observe(ctx)
		}
		reportFence(stderr, "observe", p.Blocked(), p.ClosedTabs(), bf.verbose)
		if err != nil {
			fprintf(stderr, "headroom observe: %v\n", err)
			return browserExit(ctx, err)
		}
		rendered, truncated := snap.Render()
		var stats *replay.Stats
		if m != nil {
			s := m.Stats()
			stats = &s
			if s.Misses > 0 {
				fprintf(stderr, "headroom observe: replay missed %s:\n\t%s\n", plural.Of(s.Misses, "request"), strings.Join(s.Missed, "\n\t"))
			}
		}
		if *asJSON {
			printJSON(stdout, struct {
				URL         string            `json:"url"`
				Title       string            `json:"title"`
				Fingerprint string            `json:"fingerprint"`
				Elements    []browser.Element `json:"elements"`
				Text        string            `json:"text"`
				Rendered    string            `json:"rendered"`
				Truncated   bool              `json:"truncated"`
				Replay      *replay.Stats     `json:"replay,omitempty"`
				Refused     []string          `json:"refused,omitempty"`
				ClosedTabs  []string          `json:"closed_tabs,omitempty"`
			}{snap.URL, snap.Title, snap.Fingerprint, snap.Elements, snap.Text, rendered, truncated, stats, p.Blocked(), p.ClosedTabs()})
		} else {
			fprintf(stdout, "%s", rendered)
		}
		if stats != nil && stats.Misses > 0 {
			return exitFailed // a miss is a replay that is not what was recorded
		}
		return exitOK
	}
}

// isHTTP reports an absolute http:// or https:// URL with a host: a page
// to start on.
func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// harHas reports whether a holds a GET of start, as recorded (redacted,
// with no fragment; by its path alone when fuzzy).
func harHas(a *replay.Archive, start string, fuzzy bool) bool {
	want, wantPath := normURL(replay.DefaultRedactor().URL(start))
	for _, e := range a.Log.Entries {
		if e.Request == nil || !strings.EqualFold(e.Request.Method, "GET") {
			continue
		}
		got, gotPath := normURL(e.Request.URL)
		if got == want || fuzzy && gotPath == wantPath {
			return true
		}
	}
	return false
}

// normURL is u without its fragment, and with "/" for an empty path; and
// the same without the query.
func normURL(s string) (string, string) {
	u, err := url.Parse(s)
	if err != nil {
		return s, s
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	full := u.String()
	u.RawQuery, u.ForceQuery = "", false
	return full, u.String()
}
