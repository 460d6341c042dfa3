package browser

import (
	"context"
	"time"

	"github.com/chromedp/chromedp"
)

// WaitFor is a condition a page can be waited on.
type WaitFor string

const (
	WaitLoad         WaitFor = "load"    // the document has loaded
	WaitNetworkQuiet WaitFor = "network" // no request open for 500 ms
	WaitDOMStable    WaitFor = "dom"     // the DOM unchanged for 300 ms
	// WaitChange waits for the page to change from how it was when the
	// wait began (what a person notices: nodes, text, values, scroll, the
	// URL), then to hold still for 300 ms: for a page that answers an
	// action later than the action's own settling waits.
	WaitChange WaitFor = "change"
)

// Wait waits for a condition, at most timeout (the action timeout when
// zero). Not reaching it is an ErrTimeout; the browser crashing while it
// waits is an ErrCrashed, as soon as the crash is seen.
func (p *Page) Wait(ctx context.Context, what WaitFor, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = p.opts.ActionTimeout
	}
	return p.do(ctx, "wait", string(what), timeout+time.Second, func(ctx context.Context) error {
		var ok bool
		switch what {
		case WaitLoad:
			ok = p.waitLoad(ctx, timeout)
		case WaitNetworkQuiet:
			ok = p.waitQuiet(ctx, 500*time.Millisecond, timeout)
		case WaitDOMStable:
			_, ok = p.waitStable(ctx, 300*time.Millisecond, timeout)
		case WaitChange:
			ok = p.waitChange(ctx, 300*time.Millisecond, timeout)
		default:
			return fail("", "", ErrNotFound, "unknown condition %q: want load, network, dom or change", what)
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return err // cut short: the caller, or the browser crashing
			}
			return fail("", "", ErrTimeout, "not reached within %s", timeout)
		}
		return nil
	})
}

// waitLoad waits until the main document is complete and not loading:
// woken by the tab's events, and reading the document's readyState
// every 25 ms while it is not loading, as it moves without an event.
func (p *Page) waitLoad(ctx context.Context, limit time.Duration) bool {
	return p.loadWait(ctx, p.tab(), limit)
}

// loadWait is waitLoad in tab t; ctx runs there.
func (p *Page) loadWait(ctx context.Context, t *tab, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		next := t.net.changed()
		loading := t.net.isLoading()
		if !loading && readyState(ctx) == "complete" {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		if !loading {
			left = min(left, 25*time.Millisecond)
		}
		waitEvent(ctx, next, left)
	}
}

// readyState is the document's readyState, without hashing the page as
// state does; empty mid-navigation.
func readyState(ctx context.Context) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.readyState"))
	return s
}

// waitQuiet waits until no request has been open for quiet.
func (p *Page) waitQuiet(ctx context.Context, quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		next := p.tab().net.changed()
		q := p.tab().net.quietFor()
		if q >= quiet {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		// Until the next event, or until the quiet so far has lasted;
		// with requests open that reads again after quiet, harmlessly.
		waitEvent(ctx, next, min(left, quiet-q))
	}
}

// waitStable waits until the page's hash holds for quiet; it returns the
// last state read and whether it held.
// waitChange waits, at most limit, for the page to differ from how it is
// now, and then to hold still for quiet.
func (p *Page) waitChange(ctx context.Context, quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	first := p.state(ctx)
	for {
		if !sleep(ctx, 50*time.Millisecond) {
			return false
		}
		if s := p.state(ctx); s != first && s != (pageState{}) {
			_, ok := p.waitStable(ctx, quiet, time.Until(deadline))
			return ok
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func (p *Page) waitStable(ctx context.Context, quiet, limit time.Duration) (pageState, bool) {
	deadline := time.Now().Add(limit)
	last := p.state(ctx)
	since := time.Now()
	for {
		if !sleep(ctx, 50*time.Millisecond) {
			return last, false
		}
		s := p.state(ctx)
		if s != last {
			last, since = s, time.Now()
		} else if time.Since(since) >= quiet {
			return last, true
		}
		if time.Now().After(deadline) {
			return last, false
		}
	}
}
