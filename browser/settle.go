package browser

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
)

// How long an action's effects are waited for. The browser's events say
// whether an action started a navigation or requests, and the page's
// timers (timerWatchJS) whether it deferred something for a moment, so
// there is no waiting to see: what is left to time is the DOM, which has
// settled once it has gone quiet, and a click's effects follow one
// another within a frame or two.
const (
	actionQuiet = 50 * time.Millisecond
	// settleLimit bounds the waiting for requests and quiet, on its own
	// and again after a navigation's load: a page that polls, streams or
	// animates for ever still gets its outcome read.
	settleLimit = 2 * time.Second
)

// settle waits for what an action started to finish, known from the
// tab's events and the page's timers rather than guessed: a navigation it
// asked for, to load; the requests it (or the new document) started, to
// end; the short timers it set, to fire; and the DOM, to hold still for
// actionQuiet after them. Whatever comes while it waits (a navigation a
// timer started, a request a response started) is waited for in turn,
// within settleLimit. Then it says what changed.
func (p *Page) settle(ctx context.Context, before pageState, at marks) (Outcome, error) {
	deadline := time.Now().Add(settleLimit)
	last := at.activity
	loaded := false
	for {
		if p.tab().net.activity().requested != last.requested || p.tab().net.isLoading() {
			_ = p.waitLoad(ctx, p.opts.LoadTimeout)
			if !loaded {
				// The new document gets its own bound, once: a page that
				// navigates itself over and over must still end the wait.
				deadline, loaded = time.Now().Add(settleLimit), true
			}
		}
		p.waitRequests(ctx, at.activity, deadline)
		last = p.tab().net.activity()
		p.waitDOMQuiet(ctx, actionQuiet, deadline)
		if ctx.Err() != nil || !time.Now().Before(deadline) || p.settled(at.activity, last, actionQuiet) {
			break
		}
	}
	after := p.state(ctx)
	if err := ctx.Err(); err != nil {
		// Cut short, by the caller or a crash: what was read of the page
		// says nothing of what the action did.
		return Outcome{}, err
	}
	return p.outcome(ctx, before, after, at)
}

// settled reports whether nothing the action set going is still under
// way: no navigation asked for since last and none loading, no request
// it started still open, and the DOM's quiet (just waited for) not
// overtaken by traffic: no request started since last, or none started
// or ended for as long as the DOM has been quiet, so what the requests
// brought was written before it.
func (p *Page) settled(at, last activity, quiet time.Duration) bool {
	now := p.tab().net.activity()
	if now.requested != last.requested || p.tab().net.isLoading() || p.tab().net.openSince(at) > 0 {
		return false
	}
	return now.started == last.started || p.tab().net.quietFor() >= quiet
}

// outcome is what the action did, read from the page before and after it
// and the tab's navigations since the marks.
func (p *Page) outcome(ctx context.Context, before, after pageState, at marks) (Outcome, error) {
	if err := p.blockedSince(ctx, at.blocked, after); err != nil {
		return Outcome{}, err
	}
	// A navigation the replay could not answer was aborted, as a refused
	// one is: the page is where it was, and the action failed.
	if err := p.missedDocSince(at.missed); err != nil {
		return Outcome{}, err
	}
	p.seenAt(after.URL)
	out := Outcome{URL: p.shownURL(after.URL)}
	switch {
	case p.tab().net.navCount() != at.navs || after.URL != before.URL:
		out.Effect = Navigated
	case after.DOM != before.DOM || after.Scroll != before.Scroll:
		out.Effect = Changed
	default:
		out.Effect = Nothing
	}
	return out, nil
}

// waitRequests waits, until deadline, for the requests started after a
// to end.
func (p *Page) waitRequests(ctx context.Context, a activity, deadline time.Time) {
	for {
		next := p.tab().net.changed() // before the count, so no event falls between
		if p.tab().net.openSince(a) == 0 || !waitEvent(ctx, next, time.Until(deadline)) {
			return
		}
	}
}

// waitEvent waits for next, the tab's next event, at most d; it reports
// false when d passed or ctx ended first.
func waitEvent(ctx context.Context, next <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-next:
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		return false
	}
}

// domQuietJS resolves once the document has gone a frame, the short
// timers the action set have fired (timerWatchJS), and then quiet
// milliseconds without a change a person could notice (nodes, text,
// attributes other than inline style, which animations churn; typed
// values and scrolling), through open shadow roots; or after limit
// milliseconds. It resolves at once, with an error, if the document is
// left: the navigation is then what is waited for. Its own waits use the
// page's real setTimeout, which the timer count does not see.
const domQuietJS = `((quiet, limit) => new Promise(done => {
  const T = self.__headroomTimers;
  const wait = T ? T.setTimeout : setTimeout;
  const start = performance.now();
  let last = start, framed = false;
  const bump = () => { last = performance.now(); };
  const mo = new MutationObserver(rs => { if (rs.some(r => r.type !== 'attributes' || r.attributeName !== 'style')) bump(); });
  const watch = (root) => {
    mo.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) watch(el.shadowRoot);
  };
  watch(document);
  const kinds = ['input', 'change', 'scroll'];
  for (const k of kinds) addEventListener(k, bump, {capture: true, passive: true});
  // A frame lets what the action queued run (a rAF, a timeout of 0);
  // a tab that draws no frames gets 100 ms instead.
  requestAnimationFrame(() => wait(() => { framed = true; }, 0));
  wait(() => { framed = true; }, 100);
  const tick = () => {
    const now = performance.now();
    if (T) last = Math.max(last, T.fired);
    if ((framed && now - last >= quiet && !(T && T.waiting())) || now - start >= limit) {
      mo.disconnect();
      for (const k of kinds) removeEventListener(k, bump, {capture: true});
      done(now - last >= quiet);
      return;
    }
    wait(tick, Math.max(5, quiet - (now - last)));
  };
  wait(tick, Math.min(quiet, 20));
}))`

// waitDOMQuiet waits in the page for its DOM to hold still for quiet, or
// until deadline; a document left meanwhile ends it at once.
func (p *Page) waitDOMQuiet(ctx context.Context, quiet time.Duration, deadline time.Time) {
	left := time.Until(deadline)
	if left <= 0 {
		return
	}
	// The page's own clock could be made to lie; the context bounds it.
	ctx, cancel := context.WithTimeout(ctx, left+100*time.Millisecond)
	defer cancel()
	expr := fmt.Sprintf("%s(%d, %d)", domQuietJS, quiet.Milliseconds(), left.Milliseconds())
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise))
}
