package browser

import (
	"net"
	"net/url"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// onBrowserEvent follows the downloads of the run's browser, and in a
// confined run closes every new tab as it appears: a popup, a
// target=_blank link, a prerender. A run acts in one tab, and
// a tab it does not watch is a tab whose traffic nobody records or
// replays. The fence refuses what such a tab asks for before it closes.
func (p *Page) onBrowserEvent(ev any) {
	switch ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin, *cdpbrowser.EventDownloadProgress:
		p.onDownload(ev)
		return
	}
	e, ok := ev.(*target.EventTargetCreated)
	if !ok || e.TargetInfo == nil || !p.confined {
		return
	}
	t := e.TargetInfo
	if t.Type != "page" || t.TargetID == p.targetID || p.targetID == "" {
		return
	}
	c := chromedp.FromContext(p.ctx)
	if c == nil || c.Browser == nil || (c.BrowserContextID != "" && t.BrowserContextID != c.BrowserContextID) {
		return
	}
	go func() { // not on the event loop: the reply comes through it
		_, _ = chromedp.CallBrowser(p.ctx, target.CloseTarget, target.CloseTargetParams{TargetID: t.TargetID})
	}()
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
