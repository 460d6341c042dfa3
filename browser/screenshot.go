package browser

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// Screenshot returns a PNG of what the viewport shows, as it shows it:
// passwords, secrets and all. It is for a person debugging a run (step
// screenshots to a directory), never for a model: a model is shown
// Snapshot.Screenshot, which masks what the snapshot's words redact.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := p.do(ctx, "screenshot", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		png = res.Data
		return err
	})
	return png, err
}

// afterStep counts an action and, when the run asked for it, saves a
// screenshot named after it. A failed screenshot is logged, never fatal.
func (p *Page) afterStep(ctx context.Context, op string, actErr error) {
	p.mu.Lock()
	p.steps++
	n := p.steps
	p.mu.Unlock()
	if p.opts.ScreenshotDir == "" || p.closed.Load() {
		return
	}
	png, err := p.Screenshot(ctx)
	if err == nil {
		name := fmt.Sprintf("step-%03d-%s.png", n, op)
		if actErr != nil {
			name = fmt.Sprintf("step-%03d-%s-failed.png", n, op)
		}
		err = safefile.WriteBytes(filepath.Join(p.opts.ScreenshotDir, name), png, 0o644) // never through a planted link
	}
	if err != nil {
		p.opts.Logf("screenshot after %s: %v", op, err)
	}
}
