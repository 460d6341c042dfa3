package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Observe takes a snapshot of the page: its interactive elements, from the
// DOM and layout (DOMSnapshot, which includes same-origin frames and open
// shadow roots) named and typed by the accessibility tree, and its
// rendered text. Its Index method names an element for an action.
func (p *Page) Observe(ctx context.Context) (*Snapshot, error) {
	var s *Snapshot
	err := p.do(ctx, "observe", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		t := p.tab() // the tab p.do works on
		var err error
		if s, err = capture(ctx, p.opts.Snapshot); err != nil {
			return err
		}
		s.tab = t
		if p.showsPDF() {
			p.addPDFLines(ctx, s)
		}
		p.learnCookies(ctx)
		p.seenAt(s.URL)
		p.redactSnapshot(s)
		s.Dialogs, s.Downloads = p.newDialogs(), p.newDownloads()
		if p.openCount() > 1 {
			s.Tabs = p.Tabs(ctx)
		}
		s.RefusedFrames = p.tab().net.framesRefused()
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.page = p
	return s, nil
}

// axInfo is what the accessibility tree says about one DOM node.
type axInfo struct {
	role, name string
	// weakName is a name taken from a placeholder or a title, which a
	// label a person sees beside the field says better.
	weakName bool
	disabled bool
	checked  bool
}

// styles asked of every layout node, in this order.
var snapshotStyles = []string{"display", "visibility", "cursor", "background-image"}

// interactiveRoles are roles a person can act on.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "textbox": true,
	"searchbox": true, "combobox": true, "listbox": true, "menuitem": true,
	"menuitemcheckbox": true, "menuitemradio": true, "option": true, "switch": true,
	"tab": true, "slider": true, "spinbutton": true, "treeitem": true,
}

// capture takes the snapshot as the page has it, unredacted: Observe
// redacts it before anyone sees it.
func capture(ctx context.Context, o SnapshotOptions) (*Snapshot, error) {
	snap, err := chromedp.Call(ctx, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: snapshotStyles})
	if err != nil {
		return nil, err
	}
	if len(snap.Documents) == 0 {
		return nil, errNoDocument
	}
	metrics, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	ax := map[cdp.BackendNodeID]axInfo{}
	var frames []cdp.FrameID
	hosts := map[cdp.FrameID]string{}
	var collect func(t *page.FrameTree)
	collect = func(t *page.FrameTree) {
		if t == nil || t.Frame == nil {
			return
		}
		frames = append(frames, t.Frame.ID)
		hosts[t.Frame.ID] = frameHost(t.Frame)
		for _, c := range t.ChildFrames {
			collect(c)
		}
	}
	collect(tree.FrameTree)
	for i, id := range frames {
		res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: id})
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue // a frame in another process: its elements are not in the snapshot either
		}
		for _, n := range res.Nodes {
			if n.BackendDOMNodeID != 0 && !n.Ignored {
				ax[n.BackendDOMNodeID] = axOf(n)
			}
		}
	}
	w := &walker{snap: &snap, ax: ax, opts: o.withDefaults(), hash: sha256.New(), frameHosts: hosts}
	if vp := metrics.CSSLayoutViewport; vp != nil {
		w.viewport = [4]float64{float64(vp.PageX), float64(vp.PageY), float64(vp.ClientWidth), float64(vp.ClientHeight)}
	}
	top := snap.Documents[0]
	s := &Snapshot{URL: w.str(top.DocumentURL), Title: strings.TrimSpace(w.str(top.Title)), opts: o}
	w.snapshot = s
	w.hash.Write([]byte(s.URL + "\x00"))
	w.document(0, 0, [2]float64{})
	w.flush()
	s.Text = w.text.String()
	s.Viewport = [2]float64{w.viewport[1], w.viewport[1] + w.viewport[3]}
	w.finishBlocks()
	s.Visual, s.Unnamed = w.visual(), w.unnamed()
	s.Fingerprint = hex.EncodeToString(w.hash.Sum(nil))[:16]
	return s, nil
}

func axOf(n *accessibility.Node) axInfo {
	var a axInfo
	if n.Role != nil {
		_ = json.Unmarshal(n.Role.Value, &a.role)
	}
	if n.Name != nil {
		_ = json.Unmarshal(n.Name.Value, &a.name)
		for _, src := range n.Name.Sources {
			if src == nil || src.Superseded || src.Value == nil {
				continue
			}
			var v string
			if json.Unmarshal(src.Value.Value, &v) != nil || v == "" {
				continue
			}
			// The first source with a value is the one the name came from.
			a.weakName = src.Type == accessibility.ValueSourceTypePlaceholder || src.Attribute == "placeholder" || src.Attribute == "aria-placeholder" || src.Attribute == "title"
			break
		}
	}
	for _, p := range n.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		switch p.Name {
		case accessibility.PropertyNameDisabled:
			var b bool
			_ = json.Unmarshal(p.Value.Value, &b)
			a.disabled = b
		case accessibility.PropertyNameChecked:
			var v any
			_ = json.Unmarshal(p.Value.Value, &v)
			a.checked = v == true || v == "true"
		}
	}
	return a
}
