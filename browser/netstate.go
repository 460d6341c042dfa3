package browser

import (
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
)

// netState follows the tab's traffic and navigations from its events, so
// waits and outcomes need no extra round trips.
type netState struct {
	mu          sync.Mutex
	inflight    map[network.RequestID]bool
	lastChange  time.Time // a request started or ended
	navigations int       // main-frame navigations, including same-document ones
	loading     bool      // main frame between started and stopped loading
	mainFrame   string
	// unreachable is why the fence could not reach the main frame's
	// document, when the page shows the fence's answer instead of one.
	unreachable string
}

func (n *netState) observe(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inflight == nil {
		n.inflight = map[network.RequestID]bool{}
	}
	now := time.Now()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		// WebSockets and event streams never finish; they are not "busy".
		// Nor is a worker's own script, which the browser fetches for the
		// worker (initiator "other") and reports finished to the worker's
		// session, not the tab's.
		worker := e.Type == network.ResourceTypeScript && e.Initiator != nil && e.Initiator.Type == network.InitiatorTypeOther
		if e.Type != network.ResourceTypeWebSocket && e.Type != network.ResourceTypeEventSource && !worker {
			n.inflight[e.RequestID] = true
			n.lastChange = now
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
			n.navigations++
			// Requests of the old document will never report back.
			clear(n.inflight)
			n.lastChange = now
		}
	case *page.EventNavigatedWithinDocument:
		if string(e.FrameID) == n.mainFrame {
			n.navigations++
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

func (n *netState) isLoading() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.loading
}
