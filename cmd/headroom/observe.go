package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// observeFlags are observe's flags, read when the command runs.
type observeFlags struct {
	harFile    string
	fuzzy      bool
	view       string
	pageTokens int
	configFile string
	asJSON     bool
	bf         browserFlags
}

// runObserve prints the page as a call type's calls read it (click-pick's
// by default): live, or replayed offline from a HAR file, after optional
// scripted steps.
func runObserve(fs *pflag.FlagSet) runner {
	f := &observeFlags{}
	fs.StringVar(&f.harFile, "har", "", "replay the page from this HAR `file`, offline (URL defaults to its first page)")
	fs.BoolVar(&f.fuzzy, "fuzzy", false, "with --har, answer a request with no exact match by the recorded URL with the same path and most query parameters in common (logged)")
	fs.StringVar(&f.view, "view", calltypes.ClickPick, "print the page as calls of this `type` read it: its view and its page cap (yes-no's, with no action taken, is the words)")
	fs.IntVar(&f.pageTokens, "page-tokens", 0, "cap the page at this many o200k `tokens` instead of the type's page_tokens")
	renamed(fs, "snapshot-tokens", "page-tokens")
	renamed(fs, "max-tokens", "page-tokens")
	fs.StringVar(&f.configFile, "config", "", "config `file` whose call types to read the view of, as changed or defined there (default $HEADROOM_CONFIG)")
	fs.BoolVar(&f.asJSON, "json", false, "print the snapshot as JSON (its elements and blocks, for tools), with the view as \"view\"")
	f.bf.add(fs)
	return f.run
}

// run opens the page, takes the steps, and prints the page's view.
func (f *observeFlags) run(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
	steps, err := f.bf.load()
	if err != nil {
		return failed(ctx, stderr, "observe", agent.Usage(err))
	}
	typ, err := viewType(f.view, f.configFile, f.pageTokens, stderr)
	if err != nil {
		return failed(ctx, stderr, "observe", agent.Usage(err))
	}
	if len(pos) == 0 && f.harFile == "" {
		fprintf(stderr, "headroom observe: want a URL, or --har FILE\n")
		hint(stderr, "observe")
		return exitUsage
	}
	o := f.bf.options(stderr)
	start, m, code := f.startPage(ctx, pos, &o, stderr)
	if start == "" {
		return code
	}
	p, err := browser.Open(ctx, o)
	if err != nil {
		return failed(ctx, stderr, "observe", err)
	}
	defer func() {
		// The snapshot is printed; a browser that would not close
		// cleanly is said, not made a failure of the command.
		if err := p.Close(); err != nil {
			fprintf(stderr, "headroom observe: closing the browser: %v\n", err)
		}
	}()
	_, err = p.Walk(ctx, start, browser.Actions(steps, ".")...)
	var snap *browser.Snapshot
	if err == nil {
		snap, err = p.Observe(ctx)
	}
	reportFence(stderr, "observe", p.Blocked(), p.ClosedTabs(), f.bf.verbose)
	if err != nil {
		return failed(ctx, stderr, "observe", err)
	}
	return f.print(typ, snap, p, m, stdout, stderr)
}

// startPage is the URL to start on, the one given or the HAR's first
// page, checked; with --har, o replays from m. On a start that will not
// do, what is wrong is said on stderr and start is "", with the exit
// code.
func (f *observeFlags) startPage(ctx context.Context, pos []string, o *browser.Options, stderr io.Writer) (start string, m *replay.Matcher, code int) {
	if len(pos) == 1 {
		start = pos[0]
	}
	if f.harFile != "" {
		a, err := replay.Load(f.harFile)
		if err != nil {
			return "", nil, failed(ctx, stderr, "observe", agent.Usage(err))
		}
		m = replay.NewMatcher(a, replay.Options{Fuzzy: f.fuzzy, Redactor: replay.DefaultRedactor()})
		o.Replay = m
		if start == "" {
			if start = browser.StartURL(a); start == "" {
				fprintf(stderr, "headroom observe: %s holds no page to start on\n", f.harFile)
				return "", nil, exitUsage
			}
		}
		if !m.HasPage(start) {
			fprintf(stderr, "headroom observe: %s has no entry for %s: give a URL it recorded\n", f.harFile, replay.DefaultRedactor().URL(start))
			return "", nil, exitUsage
		}
	}
	if !isHTTP(start) {
		fprintf(stderr, "headroom observe: %q is not an http(s) URL\n", replay.DefaultRedactor().URL(start))
		return "", nil, exitUsage
	}
	if err := checkPageHost(start); err != nil {
		fprintf(stderr, "headroom observe: URL: %v\n", err)
		return "", nil, exitUsage
	}
	return start, m, exitOK
}

// print writes the page's view as typ reads it, and what a replay by m
// missed; a miss fails the command.
func (f *observeFlags) print(typ calltypes.Type, snap *browser.Snapshot, p *browser.Page, m *replay.Matcher, stdout, stderr io.Writer) int {
	page := agent.ViewOf(typ, snap, nil, -1)
	rendered := page.Render()
	var stats *replay.Stats
	if m != nil {
		s := m.Stats()
		stats = &s
		if s.Misses > 0 {
			fprintf(stderr, "headroom observe: replay missed %s:\n\t%s\n", plural.Of(s.Misses, "request"), strings.Join(s.Missed, "\n\t"))
		}
	}
	if f.asJSON {
		printJSON(stdout, struct {
			URL         string            `json:"url"`
			Title       string            `json:"title"`
			Fingerprint string            `json:"fingerprint"`
			Viewport    [2]float64        `json:"viewport"`
			Elements    []browser.Element `json:"elements"`
			Blocks      []browser.Block   `json:"blocks"`
			Text        string            `json:"text"`
			View        string            `json:"view"`
			ViewType    string            `json:"view_type"`
			ViewTokens  int               `json:"view_tokens"`
			Replay      *replay.Stats     `json:"replay,omitempty"`
			Refused     []string          `json:"refused,omitempty"`
			ClosedTabs  []string          `json:"closed_tabs,omitempty"`
		}{snap.URL, snap.Title, snap.Fingerprint, snap.Viewport, snap.Elements, snap.Blocks, snap.Text, rendered, typ.Name, tokens.Count(rendered), stats, p.Blocked(), p.ClosedTabs()})
	} else {
		fprintf(stdout, "%s\n", rendered)
	}
	if stats != nil && stats.Misses > 0 {
		return exitFailed // a miss is a replay that is not what was recorded
	}
	return exitOK
}

// viewType is the call type whose view observe prints, from the built-ins
// and the config's, its cap changed when tokens is set.
func viewType(name, configFile string, tokens int, stderr io.Writer) (calltypes.Type, error) {
	types := calltypes.Default()
	f, err := readConfig("observe", configFile, stderr)
	if err == nil && f != nil {
		err = f.Apply(types)
	}
	if err != nil {
		return calltypes.Type{}, err
	}
	t, ok := types.Lookup(name)
	if !ok {
		var names []string
		for _, t := range types.Types() {
			names = append(names, t.Name)
		}
		return calltypes.Type{}, fmt.Errorf("--view %s: no call type of that name; known: %s", name, strings.Join(names, ", "))
	}
	switch {
	case tokens < 0 || tokens > 0 && tokens < calltypes.MinPageTokens:
		return calltypes.Type{}, fmt.Errorf("--page-tokens %d: give at least %d", tokens, calltypes.MinPageTokens)
	case tokens > 0:
		t.PageTokens = tokens
	}
	return t, nil
}

// isHTTP reports an absolute http:// or https:// URL with a host: a page
// to start on.
func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// checkPageHost refuses a page URL whose host a browser reads as an
// address written otherwise (browser.CheckHost): the allowed domains
// would not match what the browser loads. Only the host is quoted: the
// rest of a URL may hold a token.
func checkPageHost(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return nil // isHTTP has said why
	}
	if err := browser.CheckHost(u.Hostname()); err != nil {
		return fmt.Errorf("its host %w", err)
	}
	return nil
}
