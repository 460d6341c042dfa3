package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/browser/replay"
)

// Recording is one pass over a site: its start, the steps taken, and what
// each step did.
type Recording struct {
	URL      string
	Steps    []Step
	Outcomes []Outcome
	Title    string
	// Refused and ClosedTabs are what the page tried beyond the allowed
	// domains and its one tab (Page.Blocked, Page.ClosedTabs).
	Refused    []string
	ClosedTabs []string
	// Closed is what closing the browser met (Page.Close): said, not a
	// failure of the recording, which holds what it holds either way.
	Closed error
}

// Record loads startURL, waits for the requests the page makes after
// load, takes the steps (waiting for their requests too), and leaves every
// exchange in o.Record. dir is where screenshot steps write.
func Record(ctx context.Context, o Options, startURL string, steps []Step, dir string) (*Recording, error) {
	if o.Record == nil {
		return nil, fmt.Errorf("browser.Record needs Options.Record")
	}
	p, err := Open(ctx, o)
	if err != nil {
		return nil, err
	}
	rec := &Recording{URL: startURL, Steps: steps}
	defer func() {
		rec.Closed = p.Close()
		rec.Refused, rec.ClosedTabs = p.Blocked(), p.ClosedTabs()
	}()
	if rec.Outcomes, err = p.Walk(ctx, startURL, Actions(steps, dir)...); err != nil {
		return rec, err
	}
	if snap, err := p.Observe(ctx); err == nil {
		rec.Title = snap.Title
		o.Record.SetTitle(snap.Title)
	}
	p.drain(ctx, 5*time.Second)
	// A crash at the end cuts what was being captured: the recording is
	// not whole.
	if err := p.alive("record", safeURL(startURL)); err != nil {
		return rec, err
	}
	return rec, nil
}

// Walk loads startURL and takes the actions, waiting after the load and
// after each action for the requests they started (bounded), so what a
// page fetches late is there when the next action looks. It returns each
// action's outcome.
func (p *Page) Walk(ctx context.Context, startURL string, acts ...Action) ([]Outcome, error) {
	if _, err := p.Navigate(ctx, startURL); err != nil {
		return nil, err
	}
	if err := p.settleNetwork(ctx); err != nil {
		return nil, err
	}
	var outs []Outcome
	for i, a := range acts {
		out, err := p.Do(ctx, a)
		outs = append(outs, out)
		if err != nil {
			return outs, fmt.Errorf("step %d (%s): %w", i+1, a, err)
		}
		if err := p.settleNetwork(ctx); err != nil {
			return outs, fmt.Errorf("step %d (%s): %w", i+1, a, err)
		}
	}
	return outs, nil
}

// settleNetwork waits (bounded) for the network to go quiet. Not going
// quiet is fine; the browser crashing meanwhile is not.
func (p *Page) settleNetwork(ctx context.Context) error {
	if err := p.Wait(ctx, WaitNetworkQuiet, 10*time.Second); errors.Is(err, ErrCrashed) {
		return err
	}
	return nil
}

// drain waits for responses still being captured. A request the page
// abandoned never gets one, so a quiet network ends the wait too.
func (p *Page) drain(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		n := 0
		p.pending.Range(func(any, any) bool { n++; return true })
		if n == 0 || p.tab().net.quietFor() > 500*time.Millisecond || !sleep(ctx, 20*time.Millisecond) {
			return
		}
	}
}

// StartURL is where a replay of a recording begins: its first page.
func StartURL(a *replay.Archive) string {
	for _, e := range a.Log.Entries {
		if e.Response.Status == 200 && e.Response.Content != nil && strings.HasPrefix(e.Response.Content.MimeType, "text/html") {
			return e.Request.URL
		}
	}
	if len(a.Log.Entries) > 0 {
		return a.Log.Entries[0].Request.URL
	}
	return ""
}
