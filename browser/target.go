package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Target names the element an action works on: an index into a snapshot
// (what a model picks, from Snapshot.Index), or a CSS or XPath selector
// (what a scripted step uses).
type Target interface {
	resolve(ctx context.Context, p *Page) (cdp.BackendNodeID, error)
	String() string
}

// CSS selects the first element matching a CSS selector, looking into open
// shadow roots and same-origin frames when the document has none.
type CSS string

// XPath selects the first element matching an XPath expression in the top
// document.
type XPath string

func (s CSS) String() string   { return "css " + strconv.Quote(string(s)) }
func (s XPath) String() string { return "xpath " + strconv.Quote(string(s)) }

// deepQueryJS finds the first match in the document, then in open shadow
// roots and same-origin frames, depth first.
const deepQueryJS = `(sel) => {
  const search = (root) => {
    let hit = null;
    try { hit = root.querySelector(sel); } catch (e) { throw new Error('invalid CSS selector: ' + e.message); }
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { const h = search(el.shadowRoot); if (h) return h; }
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
        let d = null; try { d = el.contentDocument; } catch (e) {}
        if (d) { const h = search(d); if (h) return h; }
      }
    }
    return null;
  };
  return search(document);
}`

const xpathJS = `(xp) => {
  let r;
  try { r = document.evaluate(xp, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null); }
  catch (e) { throw new Error('invalid XPath: ' + e.message); }
  const n = r.singleNodeValue;
  return n && n.nodeType === 1 ? n : (n ? n.parentElement : null);
}`

func (s CSS) resolve(ctx context.Context, p *Page) (cdp.BackendNodeID, error) {
	return bySelector(ctx, s.String(), deepQueryJS, string(s))
}

func (s XPath) resolve(ctx context.Context, p *Page) (cdp.BackendNodeID, error) {
	return bySelector(ctx, s.String(), xpathJS, string(s))
}

func bySelector(ctx context.Context, target, fn, arg string) (cdp.BackendNodeID, error) {
	q, _ := json.Marshal(arg)
	obj, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject]("("+fn+")("+string(q)+")"))
	var exc *chromedp.ExceptionError
	if errors.As(err, &exc) { // the selector does not parse
		return 0, fail("", target, ErrNotFound, "%v", err)
	}
	if err != nil {
		return 0, err
	}
	if obj == nil || obj.ObjectID == "" {
		return 0, fail("", target, ErrNotFound, "nothing on the page matches")
	}
	n, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID})
	if err != nil {
		return 0, err
	}
	return n.Node.BackendNodeID, nil
}

// callOn calls a JavaScript function with the element as this, and
// returns its result decoded into T.
func callOn[T any](ctx context.Context, id cdp.BackendNodeID, fn string, args ...any) (T, error) {
	var zero T
	obj, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ObjectGroup: "headroom"})
	if err != nil {
		return zero, err
	}
	var cargs []*runtime.CallArgument
	for _, a := range args {
		if oid, ok := a.(runtime.RemoteObjectID); ok {
			cargs = append(cargs, &runtime.CallArgument{ObjectID: oid})
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			return zero, err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: b})
	}
	return callObject[T](ctx, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: obj.Object.ObjectID, Arguments: cargs,
		ReturnByValue: new(true), AwaitPromise: new(true),
	})
}

// callObject makes the call and returns its result decoded into T; an
// exception the function threw is its error.
func callObject[T any](ctx context.Context, call runtime.CallFunctionOnParams) (T, error) {
	var zero T
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, call)
	if err != nil {
		return zero, err
	}
	if res.ExceptionDetails != nil {
		return zero, &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails}
	}
	var out T
	if res.Result != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, &out); err != nil {
			return zero, fmt.Errorf("decoding %s: %w", res.Result.Value, err)
		}
	}
	return out, nil
}
