package agent

import (
	"context"
	"fmt"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// What makes a text view thin, for a type whose vision is auto: the
// model is shown the page's pixels when its words leave out what a
// person sees.
const (
	// thinVisual is the share of the viewport that canvases, images and
	// video may cover before the words no longer describe the page.
	thinVisual = 0.2
	// thinUnnamed is the share of the elements in view with no words (an
	// icon-only toolbar) at which the indexes no longer say what they do.
	thinUnnamed = 0.5
)

// thin says why the text view of snap leaves out what the page shows;
// "" when it does not. stalled is a last action that changed nothing,
// which the words could not explain.
func thin(snap *browser.Snapshot, stalled bool) string {
	if stalled {
		return "the last action changed nothing"
	}
	if snap.Visual >= thinVisual {
		return fmt.Sprintf("pictures cover %.0f%% of the viewport", 100*snap.Visual)
	}
	inView := 0
	for _, e := range snap.Elements {
		if e.Visible && !e.Offscreen {
			inView++
		}
	}
	if inView > 0 && float64(snap.Unnamed) >= thinUnnamed*float64(inView) {
		return fmt.Sprintf("%d of the %d elements in view have no words", snap.Unnamed, inView)
	}
	return ""
}

// sight is the screenshot a call of the named type carries with its
// view of snap, as the type's vision says: never, always, or auto when
// the text view is thin. nil when it carries none. A screenshot that
// cannot be had leaves the call to the words, and says so: a call is
// never lost for a picture.
func (r *runner) sight(ctx context.Context, typeName string, snap *browser.Snapshot, stalled bool) *calltypes.Image {
	t, ok := r.o.Caller.Types.Lookup(typeName)
	if !ok || snap == nil {
		return nil
	}
	why := "vision: always"
	switch t.Vision {
	case calltypes.VisionAlways:
	case calltypes.VisionAuto:
		if why = thin(snap, stalled); why == "" {
			return nil
		}
	default:
		return nil
	}
	shot, err := snap.Screenshot(ctx, browser.ShotOptions{MaxPixels: t.ImagePixels, MaxSide: t.ImageSide()})
	if err != nil {
		r.progress("screenshot for %s: %v; the call reads the words alone", typeName, err)
		return nil
	}
	r.progress("screenshot for %s: %s (%d×%d, detail %s, %d regions masked)", typeName, why, shot.Width, shot.Height, t.Detail, shot.Masked)
	return &calltypes.Image{MIME: shot.MIME, Data: shot.Data, Width: shot.Width, Height: shot.Height, Detail: t.Detail}
}
