package browser

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
)

// Index is the element at index i of this snapshot, as a Target. It
// stays bound to this snapshot: observing the page again does not move
// it onto whatever the new snapshot numbers i. It fails with ErrIndexGone
// when the element has left the page, and for an index out of range or
// from a snapshot of another Page.
func (s *Snapshot) Index(i int) Target { return index{s, i} }

type index struct {
	snap *Snapshot
	i    int
}

// hostOrNone names a host in a message.
func hostOrNone(h string) string {
	if h == "" {
		return "a page with no host"
	}
	return h
}

func (x index) String() string { return "[" + strconv.Itoa(x.i) + "]" }

func (x index) resolve(ctx context.Context, p *Page) (cdp.BackendNodeID, error) {
	s := x.snap
	switch {
	case s == nil || s.page == nil:
		return 0, fail("", x.String(), ErrIndexGone, "it is not from an observation of a page: observe the page and pick again")
	case s.page != p:
		// Another browser numbers its nodes the same way: the id would
		// name some element here.
		return 0, fail("", x.String(), ErrIndexGone, "it is from a snapshot of another page: observe this one and pick again")
	case x.i < 0 || x.i >= len(s.Elements):
		if len(s.Elements) == 0 {
			return 0, fail("", x.String(), ErrIndexGone, "its snapshot has no elements: observe again")
		}
		return 0, fail("", x.String(), ErrIndexGone, "its snapshot has indexes 0 to %d: observe again", len(s.Elements)-1)
	}
	if held := s.Elements[x.i].untouchable; len(held) > 0 {
		return 0, fail("", x.String(), ErrSecretDomain, "it shows the value of secret %s on %s, a host where that secret may not be used: acting on it would tell the page which of its words is the secret", strings.Join(held, ", "), hostOrNone(s.hosts[s.Elements[x.i].Frame]))
	}
	id := s.Elements[x.i].BackendID
	connected, err := callOn[bool](ctx, id, `function() { return this.isConnected; }`)
	var perr *cdproto.Error
	if err != nil && !errors.As(err, &perr) {
		return 0, err // not the browser's answer: the connection or the deadline
	}
	if err != nil || !connected {
		return 0, fail("", x.String(), ErrIndexGone, "the element left the page since the snapshot: observe again")
	}
	return id, nil
}
