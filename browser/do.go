package browser

import (
	"context"
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// Do takes one action and says what it did. Every action goes through
// here, whether a script or a model chose it.
func (p *Page) Do(ctx context.Context, a Action) (Outcome, error) {
	var out Outcome
	var err error
	switch a.Kind {
	case "": // only the check below
	case KindClick:
		out, err = p.Click(ctx, a.Target)
	case KindType:
		out, err = p.Type(ctx, a.Target, a.Text, a.Submit)
	case KindSelect:
		out, err = p.Select(ctx, a.Target, a.Text)
	case KindNavigate:
		out, err = p.Navigate(ctx, a.URL)
	case KindScroll:
		if a.Target != nil {
			out, err = p.ScrollTo(ctx, a.Target)
		} else {
			out, err = p.Scroll(ctx, a.Direction)
		}
	case KindPress:
		out, err = p.Press(ctx, a.Key)
	case KindHover:
		out, err = p.Hover(ctx, a.Target)
	case KindUpload:
		out, err = p.Upload(ctx, a.Target, a.Text)
	case KindBack:
		out, err = p.Back(ctx)
	case KindWait:
		out.Effect = Nothing
		if a.Until != "" {
			err = p.Wait(ctx, a.Until, 0)
		} else if !sleep(ctx, a.Delay) {
			return Outcome{}, ctx.Err()
		}
	case KindScreenshot:
		out.Effect = Nothing
		if a.File == "" {
			return out, fmt.Errorf("screenshot: no file to write: a screenshot is a file name in its folder, such as shot.png")
		}
		var png []byte
		if png, err = p.Screenshot(ctx); err == nil {
			err = safefile.WriteBytes(a.File, png, 0o644) // never through a planted link
		}
	default:
		return Outcome{}, fail(string(a.Kind), "", ErrNotFound, "unknown action: want click, type, select, navigate, scroll, press, hover, upload, back, wait or screenshot")
	}
	if err != nil {
		return out, err
	}
	if a.Expect != "" {
		text, err := p.ExtractPage(ctx)
		if err != nil {
			return out, err
		}
		if !strings.Contains(text, a.Expect) {
			return out, fail("expect", fmt.Sprintf("%q", a.Expect), ErrNotFound, "the page does not show it")
		}
	}
	return out, nil
}
