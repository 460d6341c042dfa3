// Package captcha is an action of a user's own, in one file: solve-captcha
// [i] shows the page to a captcha-solving service and types its answer
// into the captcha field [i]. Register it before the agent's registry is
// made (in main, or an init), and the model is told of it with the rest.
package captcha

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// Name is the action's verb, as the model writes it.
const Name = "solve-captcha"

// Solver reads a captcha from a picture of the page (a PNG of the
// viewport) and returns its text.
type Solver interface {
	Solve(ctx context.Context, png []byte) (string, error)
}

// SolverFunc is a function as a Solver.
type SolverFunc func(ctx context.Context, png []byte) (string, error)

// Solve calls f.
func (f SolverFunc) Solve(ctx context.Context, png []byte) (string, error) { return f(ctx, png) }

// Register adds solve-captcha, answered by s.
func Register(s Solver) error {
	if s == nil {
		return errors.New("captcha: no solver")
	}
	spec := calltypes.ActionSpec{
		Name:     Name,
		Element:  calltypes.Required,
		Describe: "the captcha whose text field is the element: a service reads it and types the answer there",
	}
	return agent.RegisterAction(spec, func(snap *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
		return browser.Perform(Name, snap.Index(a.Index), solve(s)), nil
	})
}

// solve pictures the page, asks s, and types the answer into the field.
func solve(s Solver) browser.Func {
	return func(ctx context.Context, field cdp.BackendNodeID) (string, error) {
		shot, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		if err != nil {
			return "", fmt.Errorf("picturing the captcha: %w", err)
		}
		answer, err := s.Solve(ctx, shot.Data)
		if err != nil {
			return "", fmt.Errorf("the captcha service: %w", err)
		}
		if _, err := chromedp.Call(ctx, dom.Focus, dom.FocusParams{BackendNodeID: field}); err != nil {
			return "", fmt.Errorf("focusing the captcha's field: %w", err)
		}
		if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: answer}); err != nil {
			return "", fmt.Errorf("typing the captcha's answer: %w", err)
		}
		return "typed the service's answer", nil
	}
}
