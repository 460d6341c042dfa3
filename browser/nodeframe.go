package browser

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Where a node is, and what runs on it, is asked of the browser, never of
// the page: a page's script can redefine anything a script of ours would
// read in its world (Node.prototype.ownerDocument, document.activeElement,
// HTMLInputElement.prototype.value), but not the browser's account of
// which document holds a node and which origin each frame is on, and not
// an isolated world, whose prototypes are its own.

// nodeFrames is the chain of frames that holds node id, from the tab's top
// frame down to the node's own, as the browser's frame tree has them. A
// node in no document the tab's snapshot holds (gone, or in a frame of
// another process) is ErrNotFound.
func nodeFrames(ctx context.Context, id cdp.BackendNodeID) ([]*cdp.Frame, error) {
	snap, err := chromedp.Call(ctx, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: []string{}})
	if err != nil {
		return nil, err
	}
	var frame cdp.FrameID
	for _, d := range snap.Documents {
		if d.Nodes != nil && slices.Contains(d.Nodes.BackendNodeID, id) {
			if i := int(d.FrameID); i >= 0 && i < len(snap.Strings) {
				frame = cdp.FrameID(snap.Strings[i])
			}
			break
		}
	}
	if frame == "" {
		return nil, fail("", "", ErrNotFound, "the browser holds the element in no frame of this tab")
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	chain := framePath(tree.FrameTree, frame)
	if chain == nil {
		return nil, fail("", "", ErrNotFound, "the element's frame is not in the tab's frame tree")
	}
	return chain, nil
}

// framePath is the frames from t's down to the one with id, nil when t
// does not hold it.
func framePath(t *page.FrameTree, id cdp.FrameID) []*cdp.Frame {
	if t == nil || t.Frame == nil {
		return nil
	}
	if t.Frame.ID == id {
		return []*cdp.Frame{t.Frame}
	}
	for _, c := range t.ChildFrames {
		if p := framePath(c, id); p != nil {
			return append([]*cdp.Frame{t.Frame}, p...)
		}
	}
	return nil
}

// isolatedWorld is the name of the world actions that must not be
// misled run their scripts in.
const isolatedWorld = "headroom"

// callIsolated is callOn in an isolated world of the node's own frame: the
// function sees the DOM as it is, through prototypes no script of the page
// has touched.
func callIsolated[T any](ctx context.Context, frame cdp.FrameID, id cdp.BackendNodeID, fn string, args ...any) (T, error) {
	var zero T
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: isolatedWorld})
	if err != nil {
		return zero, err
	}
	obj, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: world.ExecutionContextID, ObjectGroup: isolatedWorld})
	if err != nil {
		return zero, err
	}
	// The arguments go as one array: the protocol's encoder drops an
	// argument whose value is an empty string, which the function would
	// then see as undefined.
	b, err := json.Marshal(args)
	if err != nil {
		return zero, err
	}
	return callObject[T](ctx, runtime.CallFunctionOnParams{
		FunctionDeclaration: "function(args) { return (" + fn + ").apply(this, args); }",
		ObjectID:            obj.Object.ObjectID, Arguments: []*runtime.CallArgument{{Value: b}},
		ReturnByValue: new(true),
	})
}

// setValueJS puts text into the field itself, through the world's own
// value setter, and tells the page as typing would (input, then change):
// the text goes to this element and no other, wherever focus is. It
// returns whether the field now holds the text.
const setValueJS = `function(text) {
  if (this.isContentEditable) {
    this.textContent = text;
  } else {
    const proto = this.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(this, text);
  }
  this.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true, inputType: 'insertText', data: text}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return this.isContentEditable ? this.textContent === text : this.value === text;
}`

// insertTextJS types text into this field as typing does (the input
// events of an insertion, which the page's editors listen for), in one
// task: it takes the focus, selects what the field holds and inserts the
// text into that selection, with no moment between for the page to move
// the focus. It returns whether the field now holds the text.
const insertTextJS = `function(text) {
  this.focus();
  if (this.isContentEditable) {
    const r = document.createRange(); r.selectNodeContents(this);
    const s = getSelection(); s.removeAllRanges(); s.addRange(r);
  } else {
    this.select();
  }
  if (text !== '') document.execCommand('insertText', false, text);
  else if (!this.isContentEditable) Object.getOwnPropertyDescriptor(this.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype, 'value').set.call(this, '');
  else this.textContent = '';
  if (text === '') this.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true, inputType: 'deleteContent'}));
  return this.isContentEditable ? this.textContent === text : this.value === text;
}`

// activeJS reports whether this element is its document's active one.
const activeJS = `function() { return this.ownerDocument.activeElement === this; }`

// focused reports whether keys sent now would reach node id, in the
// frames that hold it (nodeFrames): it is its document's active element,
// and each frame's element in the frame above is that one's.
func focused(ctx context.Context, frames []*cdp.Frame, id cdp.BackendNodeID) (bool, error) {
	for i := len(frames) - 1; i >= 0; i-- {
		ok, err := callIsolated[bool](ctx, frames[i].ID, id, activeJS)
		if err != nil || !ok || i == 0 {
			return ok, err
		}
		owner, err := chromedp.Call(ctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: frames[i].ID})
		if err != nil {
			return false, err
		}
		id = owner.BackendNodeID
	}
	return false, nil
}
