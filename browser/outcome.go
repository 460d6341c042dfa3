package browser

import (
	"context"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Effect is what an action did to the page.
type Effect string

const (
	Navigated Effect = "navigated" // the page's URL or document changed
	Changed   Effect = "changed"   // same page, different content, values or scroll
	Nothing   Effect = "nothing"   // no visible difference
)

// Outcome is what an action did: its effect and the URL after it.
type Outcome struct {
	Effect Effect
	URL    string
	Detail string // for a person, e.g. `selected "Norway"`
	// Secret is set when the action typed into a password field: what it
	// typed must not be written down anywhere.
	Secret bool
	// Dialogs are the dialogs the action made the page open, each
	// answered as Options.Dialogs says.
	Dialogs []Dialog
	// Downloads are the files the action had the browser save (or
	// refuse), each whole or given up by the time the action ended.
	Downloads []Download
}

func (o Outcome) String() string {
	s := string(o.Effect)
	if o.Detail != "" {
		s += ": " + o.Detail
	}
	for _, d := range o.Dialogs {
		s += "; " + d.String()
	}
	for _, d := range o.Downloads {
		s += "; " + d.String()
	}
	return s
}

// domHashJS hashes what a person could notice: elements, attributes
// (not inline style, which animations churn), text, form values and the
// scroll position, through open shadow roots and same-origin frames.
const domHashJS = `(() => {
  let h = 2166136261;
  const mix = (s) => { for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } };
  const walk = (n) => {
    if (n.nodeType === 3) { mix(n.data); return; }
    if (n.nodeType === 1) {
      const t = n.tagName;
      if (t === 'SCRIPT' || t === 'STYLE') return;
      mix('<' + t);
      for (const a of n.attributes) if (a.name !== 'style') mix(a.name + '=' + a.value);
      if ((t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT') && typeof n.value === 'string') mix('v=' + n.value);
      if (n.checked) mix('c');
      if (n.shadowRoot) walk(n.shadowRoot);
      if (t === 'IFRAME' || t === 'FRAME') { try { if (n.contentDocument) walk(n.contentDocument); } catch (e) {} }
    } else if (n.nodeType !== 9 && n.nodeType !== 11) return;
    for (let c = n.firstChild; c; c = c.nextSibling) walk(c);
  };
  walk(document);
  return {url: location.href, dom: (h >>> 0).toString(16), scroll: Math.round(scrollX) + ',' + Math.round(scrollY)};
})()`

type pageState struct {
	URL    string `json:"url"`
	DOM    string `json:"dom"`
	Scroll string `json:"scroll"`
}

func (p *Page) state(ctx context.Context) pageState {
	return readState(ctx, domHashJS)
}

// readState evaluates js, domHashJS or one that ends with it, and adds
// the hashes of the frames of other origins, which the page's own script
// cannot read: typing into a payment provider's frame changes the page.
func readState(ctx context.Context, js string) pageState {
	s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](js))
	if err != nil {
		return pageState{} // mid-navigation: no document to read
	}
	if h := otherOriginsState(ctx); h != "" {
		s.DOM += "+" + h
	}
	return s
}

// blockedSince turns a navigation the allowed domains refused while an
// action ran into an error. The refused navigation was aborted, so the
// page stays where it was (and an error page, should one appear, is
// left by going back).
func (p *Page) blockedSince(ctx context.Context, n int, now pageState) error {
	refused := p.blockedDocsSince(n)
	if len(refused) == 0 {
		return nil
	}
	if strings.HasPrefix(now.URL, "chrome-error:") {
		_ = chromedp.Do(ctx, chromedp.NavigateBack())
		_ = p.waitLoad(ctx, p.opts.LoadTimeout)
	}
	return fail("", "", ErrBlocked, "the page tried to go to %s", refused[0])
}

func (p *Page) blockedDocCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.blockedDocs)
}

func (p *Page) blockedDocsSince(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.blockedDocs) <= n {
		return nil
	}
	return append([]string(nil), p.blockedDocs[n:]...)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
