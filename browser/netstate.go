package browser

import (
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// netState follows the tab's traffic and navigations from its events, so
// waits and outcomes need no extra round trips.
type netState struct {
	mu sync.Mutex
	// inflight holds the open requests, each with its place in started.
	inflight    map[network.RequestID]int64
	started     int64     // requests started, of those inflight counts
	lastChange  time.Time // a request started or ended
	navigations int       // main-frame navigations, including same-document ones
	// requested counts the signs that the main frame is about to leave
	// its document: a navigation the page asked for, one the browser
	// started, a document request. An action is read against it to know,
	// without waiting to see, that it started a navigation.
	requested int
	loading   bool // main frame between started and stopped loading
	mainFrame string
	// wake is closed at the next event, so a wait needs no polling.
	wake chan struct{}
	// unreachable is why the fence could not reach the main frame's
	// document, when the page shows the fence's answer instead of one.
	unreachable string
	// docType is the main frame's document's media type (application/pdf
	// for a file the browser's viewer shows).
	docType string
	// refusedFrames are the addresses of the document's frames the fence
	// refused, never read: outside the allowed domains.
	refusedFrames []string
}

// maxRefusedFrames bounds what a document's refused frames are noted of.
const maxRefusedFrames = 5

// frameRefused notes a frame of the document that the fence refused.
func (n *netState) frameRefused(u string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.refusedFrames) < maxRefusedFrames {
		n.refusedFrames = append(n.refusedFrames, u)
	}
}

// framesRefused are the refused frames of the current document.
func (n *netState) framesRefused() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.refusedFrames...)
}

// notify wakes whatever waits on the tab's next event, for a change
// the browser did not report (a download named and read).
func (n *netState) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wakeLocked()
}

func (n *netState) wakeLocked() {
	if n.wake != nil {
		close(n.wake)
		n.wake = nil
	}
}

func (n *netState) observe(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inflight == nil {
		n.inflight = map[network.RequestID]int64{}
	}
	n.wakeLocked()
	now := time.Now()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		// WebSockets and event streams never finish; they are not "busy".
		// Nor is a worker's own script, which the browser fetches for the
		// worker (initiator "other") and reports finished to the worker's
		// session, not the tab's.
		worker := e.Type == network.ResourceTypeScript && e.Initiator != nil && e.Initiator.Type == network.InitiatorTypeOther
		if e.Type != network.ResourceTypeWebSocket && e.Type != network.ResourceTypeEventSource && !worker {
			n.started++
			n.inflight[e.RequestID] = n.started
			n.lastChange = now
		}
		if e.Type == network.ResourceTypeDocument && n.main(e.FrameID) {
			n.requested++
		}
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && e.Response != nil && (string(e.FrameID) == n.mainFrame || n.mainFrame == "") {
			n.unreachable, _ = e.Response.Headers[fenceUnreachable].(string)
		}
	case *network.EventLoadingFinished:
		delete(n.inflight, e.RequestID)
		n.lastChange = now
	case *network.EventLoadingFailed:
		delete(n.inflight, e.RequestID)
		n.lastChange = now
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			n.mainFrame = string(e.Frame.ID)
			n.docType = e.Frame.MimeType
			n.navigations++
			n.refusedFrames = nil
			// Requests of the old document will never report back.
			clear(n.inflight)
			n.lastChange = now
		}
	case *page.EventNavigatedWithinDocument:
		if string(e.FrameID) == n.mainFrame {
			n.navigations++
		}
	case *page.EventFrameRequestedNavigation:
		if e.Disposition == page.ClientNavigationDispositionCurrentTab && n.main(e.FrameID) {
			n.requested++
		}
	case *page.EventFrameStartedNavigating:
		if n.main(e.FrameID) {
			n.requested++
		}
	case *page.EventFrameStartedLoading:
		if string(e.FrameID) == n.mainFrame || n.mainFrame == "" {
			n.loading = true
		}
	case *page.EventFrameStoppedLoading:
		if string(e.FrameID) == n.mainFrame {
			n.loading = false
		}
	}
}

// main reports whether id is the main frame's, or could be: before the
// first navigation the main frame is not known yet.
func (n *netState) main(id cdp.FrameID) bool {
	return n.mainFrame == "" || string(id) == n.mainFrame
}

// changed is closed at the next event the tab reports.
func (n *netState) changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.wake == nil {
		n.wake = make(chan struct{})
	}
	return n.wake
}

// activity is where the tab's traffic stands: the navigations asked for
// and the requests started so far. An action's effects are what comes
// after the activity marked before it.
type activity struct {
	requested int
	started   int64
}

func (n *netState) activity() activity {
	n.mu.Lock()
	defer n.mu.Unlock()
	return activity{n.requested, n.started}
}

// openSince counts the requests still open among those started after a.
func (n *netState) openSince(a activity) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	open := 0
	for _, at := range n.inflight {
		if at > a.started {
			open++
		}
	}
	return open
}

// quietFor is how long no request has started or ended, with none open.
func (n *netState) quietFor() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.inflight) > 0 {
		return 0
	}
	return time.Since(n.lastChange)
}

func (n *netState) navCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.navigations
}

// unreachableDoc is why the main frame's document could not be reached,
// "" when it was.
func (n *netState) unreachableDoc() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.unreachable
}

// documentType is the main frame's document's media type.
func (n *netState) documentType() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.docType
}

func (n *netState) isLoading() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.loading
}
