package browser

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The page's frames, read where the page's own script cannot: a frame of
// another origin (a payment form, a sign-in widget) is in the tab's
// process (launchFlags), and each of its reads runs in an isolated world
// of that frame.

// otherOriginsState hashes each frame whose origin is not the main
// frame's, each in an isolated world of its own frame; "" when there is
// none (the page's script hashed every frame it can reach).
func otherOriginsState(ctx context.Context) string {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return ""
	}
	origin := tree.FrameTree.Frame.SecurityOrigin
	var hashes []string
	for _, f := range childFrames(tree.FrameTree) {
		if f.SecurityOrigin != origin {
			hashes = append(hashes, frameHash(ctx, f.ID))
		}
	}
	return strings.Join(hashes, "+")
}

// frameHash is domHashJS's dom hash of one frame; "" when it cannot be
// read (a frame mid-navigation, or refused and empty).
func frameHash(ctx context.Context, frame cdp.FrameID) string {
	st, err := evalInFrame[pageState](ctx, frame, domHashJS)
	if err != nil {
		return ""
	}
	return st.DOM + "@" + st.Scroll
}

// framesText is the rendered text of the page's frames, each after the
// one before, in frame order: what ExtractPage's document.body cannot
// reach.
func framesText(ctx context.Context) string {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil || tree.FrameTree == nil {
		return ""
	}
	var texts []string
	for _, f := range childFrames(tree.FrameTree) {
		if t, err := evalInFrame[string](ctx, f.ID, "document.body ? document.body.innerText : ''"); err == nil && strings.TrimSpace(t) != "" {
			texts = append(texts, strings.TrimSpace(t))
		}
	}
	return strings.Join(texts, "\n")
}

// childFrames are the frames below the main one, in document order.
func childFrames(t *page.FrameTree) []*cdp.Frame {
	var out []*cdp.Frame
	for _, c := range t.ChildFrames {
		if c.Frame != nil {
			out = append(out, c.Frame)
		}
		out = append(out, childFrames(c)...)
	}
	return out
}

// evalInFrame evaluates js in an isolated world of the frame.
func evalInFrame[T any](ctx context.Context, frame cdp.FrameID, js string) (T, error) {
	var zero T
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: isolatedWorld})
	if err != nil {
		return zero, err
	}
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: js, ContextID: world.ExecutionContextID, ReturnByValue: new(true)})
	switch {
	case err != nil:
		return zero, err
	case res.ExceptionDetails != nil:
		return zero, &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails}
	case res.Result == nil:
		return zero, errors.New("no result")
	}
	var v T
	return v, json.Unmarshal(res.Result.Value, &v)
}
