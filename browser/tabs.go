package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/plural"
)

// tab is one of the run's tabs: chromedp's context bound to its target,
// its traffic, and the tab that opened it.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     target.ID
	opener target.ID
	net    netState
	gone   atomic.Bool // closed, by the page or the run
	pdf    atomic.Pointer[openedPDF]
}

// tab is the tab actions and observations go to.
func (p *Page) tab() *tab { return p.cur.Load() }

// Tab is an open tab, as a snapshot names it.
type Tab struct {
	Number  int    `json:"number"` // from 1, in the order the tabs opened
	Title   string `json:"title"`
	URL     string `json:"url"` // secret parameters redacted
	Current bool   `json:"current,omitempty"`
}

// maxTabsLimit bounds Options.Tabs: each tab is a renderer.
const maxTabsLimit = 16

// following reports whether new tabs are followed rather than closed: the
// run allows more than one, and each can be fenced before it runs (a
// browser attached elsewhere cannot reach the run's proxy).
func (p *Page) following() bool {
	return p.opts.Tabs > 1 && (!p.confined || p.fence != nil)
}

// onBrowserEvent follows the downloads of the run's browser, and the tabs
// its pages open: followed up to Options.Tabs, else closed as they
// appear (a popup, a target=_blank link, a prerender) in a confined run,
// where a tab nobody watches is one whose traffic nobody records or
// replays. The fence refuses what such a tab asks for before it closes.
func (p *Page) onBrowserEvent(ev any) {
	switch ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin, *cdpbrowser.EventDownloadProgress:
		p.onDownload(ev)
		return
	}
	if e, ok := ev.(*target.EventTargetDestroyed); ok {
		if t := p.tabOf(e.TargetID); t != nil && t != p.first {
			p.tabGone(t)
		}
		return
	}
	e, ok := ev.(*target.EventTargetCreated)
	if !ok || e.TargetInfo == nil {
		return
	}
	t := e.TargetInfo
	if t.Type != "page" || p.ours(t.TargetID) || p.first.id == "" {
		return
	}
	c := chromedp.FromContext(p.first.ctx)
	if c == nil || c.Browser == nil || (c.BrowserContextID != "" && t.BrowserContextID != c.BrowserContextID) {
		return
	}
	switch {
	case p.following() && p.openCount() < p.opts.Tabs && !p.closed.Load():
		p.opening.Add(1)
		go p.follow(t)
	case p.following(), p.confined:
		go p.closeTarget(t.TargetID) // noted as the page asked for it (onEvent)
	}
}

// ours reports whether id is one of the run's tabs.
func (p *Page) ours(id target.ID) bool { return p.tabOf(id) != nil }

// tabOf is the run's tab of target id, nil when none is.
func (p *Page) tabOf(id target.ID) *tab {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.IndexFunc(p.tabs, func(t *tab) bool { return t.id == id }); i >= 0 {
		return p.tabs[i]
	}
	return nil
}

// closedNow reports whether tab t has closed, asking the browser: its
// events may come after the action that closed it ends.
func (p *Page) closedNow(t *tab) bool {
	if t == p.first {
		return false
	}
	if !t.gone.Load() {
		if _, err := chromedp.Call(p.first.ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.id}); err != nil {
			p.tabGone(t)
		}
	}
	return t.gone.Load()
}

func (p *Page) openCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.tabs)
}

// follow attaches to a tab the page opened, fences and wires it as the
// first tab is, and keeps it when its address is on the allowed domains.
// A recorded or replayed run loads it again once wired, so its document
// passes through the recorder or the replay too.
func (p *Page) follow(info *target.Info) {
	defer p.opening.Done()
	ctx, cancel := chromedp.NewContext(p.first.ctx, chromedp.WithTargetID(info.TargetID))
	t := &tab{ctx: ctx, cancel: cancel, id: info.TargetID, opener: info.OpenerID}
	drop := func(why string, u string) {
		if why != "" {
			p.noteClosed(u, why)
		}
		p.closeTarget(t.id)
		cancel()
	}
	if err := chromedp.Do(ctx); err != nil { // attaches
		drop("it could not be attached: "+err.Error(), info.URL)
		return
	}
	if err := p.wireTab(t); err != nil {
		drop("it could not be fenced: "+err.Error(), info.URL)
		return
	}
	u := p.tabURL(t, info.URL)
	if p.confined && !p.allow.url(u) {
		drop("", u) // noted as the page asked for it (onEvent)
		return
	}
	if p.opts.Record != nil && u != "" && u != "about:blank" {
		// Its first load passed the fence before the recorder was wired:
		// the page loads it again, as its own reload (a navigation of the
		// browser's could cut the tab from its opener).
		lctx, stop := context.WithTimeout(ctx, p.opts.LoadTimeout)
		_, err := chromedp.Run(lctx, chromedp.Evaluate[bool]("location.reload(), true"))
		stop()
		if err == nil {
			p.waitLoadOf(t, p.opts.LoadTimeout)
		} else {
			p.opts.Logf("loading the new tab %s again: %v", safeURL(u), err)
		}
	}
	p.mu.Lock()
	p.tabs = append(p.tabs, t)
	p.newTabs++
	p.mu.Unlock()
	p.opts.Logf("following the new tab the page opened (%s)", safeURL(u))
}

// waitLoadOf waits for tab t to load, as waitLoad does for the current.
func (p *Page) waitLoadOf(t *tab, limit time.Duration) {
	ctx, cancel := context.WithTimeout(t.ctx, limit+time.Second)
	defer cancel()
	p.loadWait(ctx, t, limit)
}

// tabURL is where a new tab is going: a window.open or a link's target
// shows about:blank for a moment before its address.
func (p *Page) tabURL(t *tab, u string) string {
	deadline := time.Now().Add(2 * time.Second)
	for (u == "" || u == "about:blank") && time.Now().Before(deadline) {
		info, err := chromedp.Call(t.ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.id})
		if err != nil {
			break
		}
		if u = info.TargetInfo.URL; u != "" && u != "about:blank" {
			break
		}
		if !sleep(t.ctx, 50*time.Millisecond) {
			break
		}
	}
	return u
}

func (p *Page) noteClosed(u, why string) {
	shown := safeURL(u)
	p.mu.Lock()
	p.closedTabs = append(p.closedTabs, shown)
	p.mu.Unlock()
	p.opts.Logf("closing the new tab the page opened (%s): %s", shown, why)
}

func (p *Page) closeTarget(id target.ID) {
	_, _ = chromedp.CallBrowser(p.first.ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
}

// tabGone takes a closed tab out of the run; when it was the current one,
// the run goes on in the tab that opened it (else the first).
func (p *Page) tabGone(t *tab) {
	if t.gone.Swap(true) {
		return
	}
	p.mu.Lock()
	p.tabs = slices.DeleteFunc(p.tabs, func(o *tab) bool { return o == t })
	back := p.first
	for _, o := range p.tabs {
		if o.id == t.opener {
			back = o
		}
	}
	p.mu.Unlock()
	p.cur.CompareAndSwap(t, back)
	go t.cancel() // not on its event loop
}

// closeOtherTabs closes every tab but the first, as the Page closes.
func (p *Page) closeOtherTabs() {
	p.mu.Lock()
	others := slices.Clone(p.tabs[min(1, len(p.tabs)):])
	p.mu.Unlock()
	for _, t := range others {
		p.closeTarget(t.id)
		t.gone.Store(true)
		t.cancel()
	}
}

// tabsSince waits (within limit) for the tabs an action opened to be
// wired, and returns the newest of those it opened since n, nil when
// none.
func (p *Page) tabsSince(n int, limit time.Duration) *tab {
	done := make(chan struct{})
	go func() { p.opening.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.newTabs == n || len(p.tabs) < 2 {
		return nil
	}
	return p.tabs[len(p.tabs)-1]
}

// followedCount is how many tabs the run has followed so far.
func (p *Page) followedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.newTabs
}

// Tabs are the open tabs, in the order they opened, the current one
// marked. Titles and addresses are read from the browser.
func (p *Page) Tabs(ctx context.Context) []Tab {
	p.mu.Lock()
	tabs := slices.Clone(p.tabs)
	p.mu.Unlock()
	cur := p.tab()
	out := make([]Tab, 0, len(tabs))
	for i, t := range tabs {
		tb := Tab{Number: i + 1, Current: t == cur}
		if info, err := chromedp.Call(p.first.ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.id}); err == nil && info.TargetInfo != nil {
			tb.Title, tb.URL = p.hide(info.TargetInfo.Title), p.shownURL(info.TargetInfo.URL)
		}
		out = append(out, tb)
	}
	return out
}

// SwitchTab makes tab number n (from 1, as Tabs numbers them) the one
// actions and observations go to, and brings it to the front.
func (p *Page) SwitchTab(ctx context.Context, n int) (Outcome, error) {
	p.mu.Lock()
	var t *tab
	if n >= 1 && n <= len(p.tabs) {
		t = p.tabs[n-1]
	}
	count := len(p.tabs)
	p.mu.Unlock()
	if t == nil {
		return Outcome{}, fail("tab", fmt.Sprint(n), ErrNotFound, "there is no tab %d: %s open", n, plural.Of(count, "tab/tabs"))
	}
	if t == p.tab() {
		return Outcome{Effect: Nothing, Detail: fmt.Sprintf("tab %d is the current one", n)}, nil
	}
	if _, err := chromedp.Call(t.ctx, target.ActivateTarget, target.ActivateTargetParams{TargetID: t.id}); err != nil {
		return Outcome{}, fail("tab", fmt.Sprint(n), ErrNotFound, "it could not be brought to the front: %v", err)
	}
	p.cur.Store(t)
	return p.nowOn(ctx, fmt.Sprintf("switched to tab %d", n))
}

// CloseTab closes the current tab and goes on in the one that opened it
// (else the first). The run's first tab is not closed.
func (p *Page) CloseTab(ctx context.Context) (Outcome, error) {
	t := p.tab()
	if t == p.first {
		return Outcome{}, fail("close-tab", "", ErrNotFound, "this is the run's first tab: close only a tab the page opened")
	}
	p.closeTarget(t.id)
	p.tabGone(t)
	return p.nowOn(ctx, "closed the tab")
}

// nowOn is the outcome of moving to another tab: a navigation to where it
// stands.
func (p *Page) nowOn(ctx context.Context, detail string) (Outcome, error) {
	u, err := p.URL(ctx)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Effect: Navigated, URL: u, Detail: detail}, nil
}

// replayBeside answers, from the replay's archive, a page's GET on the
// allowed domains that reaches the fence rather than the tab's Fetch: the
// first document of a tab the page opened, loaded before the run could
// wire it. Anything else beside the tab stays refused.
func (p *Page) replayBeside(w http.ResponseWriter, r *http.Request) bool {
	// A prefetch, a worker's script or a beacon stays refused: only a
	// document the archive holds is answered, and nothing else is counted
	// as a miss.
	doc := r.Header.Get("Sec-Fetch-Dest")
	if r.Method != http.MethodGet || (doc != "" && doc != "document") || r.Header.Get("Sec-Purpose") != "" ||
		!p.allow.url(r.URL.String()) || !p.opts.Replay.Has(r.Method, r.URL.String()) {
		return false
	}
	m, ok := p.opts.Replay.Match(replay.Request{Method: r.Method, URL: r.URL.String()})
	if !ok || m.Entry.Response == nil {
		return false
	}
	for _, h := range replay.ResponseHeaders(m.Entry) {
		w.Header().Add(h.Name, h.Value)
	}
	w.WriteHeader(int(m.Entry.Response.Status))
	if c := m.Entry.Response.Content; c != nil {
		_, _ = w.Write(c.Text)
	}
	return true
}

// refusedByFence counts a request the fence turned away.
func (p *Page) refusedByFence(method, u string) {
	u = safeURL(u)
	p.mu.Lock()
	p.blocked = append(p.blocked, u)
	p.mu.Unlock()
	p.opts.Logf("blocked %s %s: outside the allowed domains (refused by the run's proxy)", method, u)
}

// remoteIsLocal reports whether an attached browser runs on this machine,
// where it can reach the run's proxy on loopback.
func remoteIsLocal(addr string) bool {
	u, err := url.Parse(addr)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
