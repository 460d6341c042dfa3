package browser

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/redact"
)

// pending is a recorded request waiting for its response.
type pending struct {
	seq     int64
	started time.Time
	req     *network.Request
}

// intercept answers one paused request. Every path ends in exactly one of
// continue, fulfil or fail: an unanswered request hangs the page.
func (p *Page) intercept(t *tab, ev fetch.EventRequestPaused) {
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		p.recordResponse(t, ev)
		return
	}
	// A value the HAR would redact in this request's URL is scrubbed from
	// every output from now on, wherever the page shows it again.
	redact.LearnURL(ev.Request.URL)
	if u := ev.Request.URL + ev.Request.URLFragment; !p.allow.url(u) {
		u = safeURL(u)
		doc := ev.ResourceType == network.ResourceTypeDocument
		p.mu.Lock()
		p.blocked = append(p.blocked, u)
		if doc && string(ev.FrameID) == string(t.id) { // a tab's main frame shares its target's id
			p.blockedDocs = append(p.blockedDocs, u)
		}
		if doc && string(ev.FrameID) != string(t.id) {
			t.net.frameRefused(u)
		}
		p.mu.Unlock()
		p.opts.Logf("blocked %s %s: outside the allowed domains", ev.Request.Method, u)
		if doc {
			// An aborted navigation leaves the document where it was; a
			// blocked one would replace it with an error page, and going
			// back from there runs the page that navigated again.
			p.failRequest(t, ev.RequestID, network.ErrorReasonAborted)
			return
		}
		p.failRequest(t, ev.RequestID, network.ErrorReasonBlockedByClient)
		return
	}
	switch {
	case p.opts.Replay != nil:
		p.replay(t, ev)
	case p.opts.Record != nil:
		p.pending.Store(ev.RequestID, pending{seq: p.seq.Add(1), started: time.Now(), req: ev.Request})
		_, _ = chromedp.Call(t.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID, InterceptResponse: new(true)})
	default:
		_, _ = chromedp.Call(t.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	}
}

func (p *Page) failRequest(t *tab, id fetch.RequestID, why network.ErrorReason) {
	_, _ = chromedp.Call(t.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: why})
}

// replay fulfils a request from the archive, or fails it as a miss.
func (p *Page) replay(t *tab, ev fetch.EventRequestPaused) {
	req := replay.Request{Method: ev.Request.Method, URL: ev.Request.URL, Body: postData(ev.Request), Headers: headerStrings(ev.Request.Headers)}
	m, ok := p.opts.Replay.Match(req)
	if !ok {
		p.replayMiss(t, ev, req)
		return
	}
	if m.Fuzzy {
		asked := req.Method + " " + safeURL(req.URL)
		if p.firstWarning("fuzzy " + asked + " " + m.Entry.Request.URL) {
			p.opts.Warnf("replay: %s answered by the recorded %s (fuzzy match)", asked, m.Entry.Request.URL)
		}
	}
	var hs []*fetch.HeaderEntry
	for _, h := range replay.ResponseHeaders(m.Entry) {
		hs = append(hs, &fetch.HeaderEntry{Name: h.Name, Value: h.Value})
	}
	params := fetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    m.Entry.Response.Status,
		ResponseHeaders: hs,
		ResponsePhrase:  m.Entry.Response.StatusText,
	}
	if m.Entry.Response.Content != nil {
		params.Body = m.Entry.Response.Content.Text
	}
	if params.ResponsePhrase == "" {
		params.ResponsePhrase = http.StatusText(int(params.ResponseCode))
	}
	if _, err := chromedp.Call(t.ctx, fetch.FulfillRequest, params); err != nil {
		p.opts.Logf("replay: fulfilling %s: %v", safeURL(req.URL), err)
		p.failRequest(t, ev.RequestID, network.ErrorReasonFailed)
	}
}

// replayMiss fails a request the archive cannot answer and says so. A
// navigation of the tab's own frame is aborted, as a refused one is, so
// the page stays where it was; the action that caused it fails with
// ErrNotRecorded. Anything else fails as if offline.
func (p *Page) replayMiss(t *tab, ev fetch.EventRequestPaused, req replay.Request) {
	u := safeURL(req.URL)
	asked := strings.ToUpper(req.Method) + " " + u
	doc := ev.ResourceType == network.ResourceTypeDocument && string(ev.FrameID) == string(t.id)
	note := p.missNote(req.Method, u, doc)
	if doc {
		p.mu.Lock()
		p.missedDocs = append(p.missedDocs, fail("", "", ErrNotRecorded, "%s is not in %s", shownRequest(req.Method, u), note))
		p.mu.Unlock()
	}
	if p.firstWarning("miss " + asked) {
		p.opts.Warnf("replay miss: %s is not in %s", asked, note)
	}
	if doc {
		p.failRequest(t, ev.RequestID, network.ErrorReasonAborted)
		return
	}
	p.failRequest(t, ev.RequestID, network.ErrorReasonInternetDisconnected)
}

// shownRequest is a request for a message: its URL, after its method
// when that is not GET.
func shownRequest(method, u string) string {
	if strings.EqualFold(method, "GET") {
		return u
	}
	return strings.ToUpper(method) + " " + u
}

// shownPages is how many of an archive's pages a miss lists.
const shownPages = 5

// missNote names the archive and what it holds near u: for a document,
// its pages, nearest first; for anything else, the nearest request with
// the same method. It starts with the archive's name.
func (p *Page) missNote(method, u string, doc bool) string {
	m := p.opts.Replay
	name := m.Name()
	if doc {
		pages := m.Pages()
		near := replay.Nearest(u, pages, shownPages)
		switch {
		case len(pages) == 0:
			return name + " (it holds no pages)"
		case len(pages) == 1:
			return name + " (it holds 1 page: " + near[0] + ")"
		case len(pages) > len(near):
			return fmt.Sprintf("%s (it holds %d pages; the nearest: %s, …)", name, len(pages), strings.Join(near, ", "))
		}
		return fmt.Sprintf("%s (it holds %d pages: %s)", name, len(pages), strings.Join(near, ", "))
	}
	near := replay.Nearest(u, m.URLs(method), 1)
	switch {
	case len(near) == 0:
		return fmt.Sprintf("%s (it holds no %s request)", name, strings.ToUpper(method))
	case near[0] == u:
		return fmt.Sprintf("%s (it holds this %s with another body)", name, strings.ToUpper(method))
	}
	return name + " (the nearest it holds: " + near[0] + ")"
}

// firstWarning reports whether a replay warning is new for this Page.
func (p *Page) firstWarning(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warned[key] {
		return false
	}
	if p.warned == nil {
		p.warned = map[string]bool{}
	}
	p.warned[key] = true
	return true
}

func (p *Page) missedDocCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.missedDocs)
}

// missedDocSince is the first navigation of the tab the replay could not
// answer after the first n, as its error; nil when none.
func (p *Page) missedDocSince(n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.missedDocs) <= n {
		return nil
	}
	e := *p.missedDocs[n]
	return &e
}

// recordResponse captures a response at the response stage, then lets it
// through unchanged.
func (p *Page) recordResponse(t *tab, ev fetch.EventRequestPaused) {
	defer func() {
		_, _ = chromedp.Call(t.ctx, fetch.ContinueResponse, fetch.ContinueResponseParams{RequestID: ev.RequestID})
	}()
	v, ok := p.pending.LoadAndDelete(ev.RequestID)
	if !ok || ev.ResponseErrorReason != "" {
		return // failed requests are not recorded: replay fails them too
	}
	pr := v.(pending)
	x := replay.Exchange{
		Seq:            pr.seq,
		Started:        pr.started,
		Method:         pr.req.Method,
		URL:            pr.req.URL,
		RequestHeaders: headerStrings(pr.req.Headers),
		RequestBody:    postData(pr.req),
		Status:         int(ev.ResponseStatusCode),
		StatusText:     ev.ResponseStatusText,
	}
	for _, h := range ev.ResponseHeaders {
		x.ResponseHeaders = append(x.ResponseHeaders, replay.Header{Name: h.Name, Value: h.Value})
	}
	if !isRedirect(x.Status) {
		body, err := chromedp.Call(t.ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
		if err != nil {
			p.opts.Logf("record: no body for %s: %v", safeURL(x.URL), err)
		} else {
			// What the page shows of a secret is its placeholder in the
			// recording too, so a replay shows what the live page did.
			x.Body = p.hideBody(body.Body, responseHeader(x.ResponseHeaders, "Content-Type"), hostOf(x.URL))
		}
	}
	x.Duration = time.Since(pr.started)
	p.opts.Record.Add(x)
}

// responseHeader is the first value of the named header, "" when none.
func responseHeader(hs []replay.Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

func postData(r *network.Request) []byte {
	var b []byte
	for _, e := range r.PostDataEntries {
		b = append(b, e.Bytes...)
	}
	return b
}

func headerStrings(h network.Headers) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = fmt.Sprint(v)
	}
	return out
}
