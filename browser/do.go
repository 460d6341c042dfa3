package browser

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// Do takes one action and says what it did. Every action goes through
// here, whether a script or a model chose it. Its error is an *Error
// (ErrNoAction for one it cannot take as written), or ctx's own when the
// caller's context ended, or a screenshot's file that could not be
// written.
func (p *Page) Do(ctx context.Context, a Action) (Outcome, error) {
	var out Outcome
	var err error
	switch {
	case a.Func != nil:
		out, err = p.perform(ctx, a)
	case a.Kind != "":
		out, err = p.builtin(ctx, a)
	case a.Expect == "":
		return Outcome{}, fail("do", "", ErrNoAction, "the action has no kind, no function and nothing to expect: build one with Click, TypeInto, ... or Perform")
	}
	if err != nil {
		return out, err
	}
	if a.Expect != "" {
		return out, p.expect(ctx, a.Expect)
	}
	return out, nil
}

// expectWait bounds how long an expect reads the page again for its text.
const expectWait = 5 * time.Second

// expect waits, at most expectWait, for the page's text to show want: a
// page that answers an action later than the action's own settling (a
// form a script submits, a redirect on a loaded machine) is read again,
// not failed at once.
func (p *Page) expect(ctx context.Context, want string) error {
	deadline := time.Now().Add(expectWait)
	for {
		text, err := p.ExtractPage(ctx)
		switch {
		case err == nil && strings.Contains(text, want):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline) && err != nil:
			return err
		case time.Now().After(deadline):
			return fail("expect", fmt.Sprintf("%q", want), ErrNotFound, "the page does not show it (read for %s)", expectWait)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// builtin takes one of the package's own kinds of action.
func (p *Page) builtin(ctx context.Context, a Action) (Outcome, error) {
	switch a.Kind {
	case KindClick:
		return p.Click(ctx, a.Target)
	case KindType:
		return p.Type(ctx, a.Target, a.Text, a.Submit)
	case KindSelect:
		return p.Select(ctx, a.Target, a.Text)
	case KindNavigate:
		return p.Navigate(ctx, a.URL)
	case KindScroll:
		if a.Target != nil {
			return p.ScrollTo(ctx, a.Target)
		}
		return p.Scroll(ctx, a.Direction)
	case KindPress:
		return p.Press(ctx, a.Key)
	case KindHover:
		return p.Hover(ctx, a.Target)
	case KindUpload:
		return p.Upload(ctx, a.Target, a.Text)
	case KindBack:
		return p.Back(ctx)
	case KindTab:
		return p.SwitchTab(ctx, a.Tab)
	case KindCloseTab:
		return p.CloseTab(ctx)
	case KindWait:
		out := Outcome{Effect: Nothing}
		if a.Until != "" {
			return out, p.Wait(ctx, a.Until, 0)
		}
		if !sleep(ctx, a.Delay) {
			return Outcome{}, ctx.Err()
		}
		return out, nil
	case KindScreenshot:
		out := Outcome{Effect: Nothing}
		if a.File == "" {
			return out, fail("screenshot", "", ErrNoAction, "no file to write: a screenshot is a file name in its folder, such as shot.png")
		}
		png, err := p.Screenshot(ctx)
		if err == nil {
			err = safefile.WriteBytes(a.File, png, 0o644) // never through a planted link
		}
		return out, err
	}
	return Outcome{}, fail(string(a.Kind), "", ErrNoAction, "unknown action: want click, type, select, navigate, scroll, press, hover, upload, back, wait, screenshot, tab or close-tab, or an action of your own (Perform)")
}

// perform takes an action of the caller's own: on its element when it
// names one, else on the page, waiting for what it started as the
// built-ins do.
func (p *Page) perform(ctx context.Context, a Action) (Outcome, error) {
	op := string(a.Kind)
	if a.Target != nil {
		return p.act(ctx, op, a.Target, a.Func)
	}
	var detail string
	out, err := p.pageAction(ctx, op, "", func(ctx context.Context, _ pageState) (*Outcome, error) {
		var err error
		detail, err = a.Func(ctx, 0)
		return nil, err
	})
	if detail != "" {
		out.Detail = p.hide(detail)
	}
	return out, err
}
