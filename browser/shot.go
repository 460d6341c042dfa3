package browser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ShotOptions bound a Shot's size; 0 leaves a bound off.
type ShotOptions struct {
	MaxPixels int // width × height
	MaxSide   int // the longer side
}

// Shot is a picture of the viewport fit to hand on: every place the
// snapshot's words redacted painted black, scaled down to its bounds.
type Shot struct {
	Data          []byte
	MIME          string // image/jpeg
	Width, Height int    // in pixels, after scaling
	Masked        int    // the regions painted black
}

// shotQuality is the JPEG quality of a Shot: text stays readable, and a
// viewport is tens of kilobytes.
const shotQuality = 80

// maskPad widens each masked region, in CSS pixels, past what the layout
// says the words cover: anti-aliasing, a caret, a glyph's overhang.
const maskPad = 4

// Screenshot takes a picture of the viewport of the tab the snapshot was
// taken on, for a reader the snapshot's words are for: what they show
// redacted (a secret's value, a password field, an element no action may
// touch) is painted black, as each place stood when the snapshot was
// taken, so take it right after Observe. It is then scaled down (never
// up) to o's bounds and encoded as JPEG. Page.Screenshot, which masks
// nothing, is for a person debugging a run, never for a model.
func (s *Snapshot) Screenshot(ctx context.Context, o ShotOptions) (Shot, error) {
	if s == nil || s.page == nil {
		return Shot{}, fail("screenshot", "", ErrNoAction, "the snapshot is not from an observation of a page: take one with Page.Observe")
	}
	p := s.page
	if s.tab != nil && s.tab.gone.Load() {
		return Shot{}, fail("screenshot", "", ErrClosed, "the snapshot's tab was closed")
	}
	if s.tab != nil && s.tab != p.tab() {
		return Shot{}, fail("screenshot", "", ErrNoAction, "the snapshot is of a tab that is no longer the current one: observe the current tab, or switch back")
	}
	var raw []byte
	var views []view
	err := p.do(ctx, "screenshot", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		// Where the viewport stood before and after the capture: a page
		// that scrolled meanwhile is masked at both.
		before, err := viewNow(ctx)
		if err != nil {
			return err
		}
		res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		if err != nil {
			return err
		}
		after, err := viewNow(ctx)
		if err != nil {
			return err
		}
		raw, views = res.Data, []view{before}
		if after != before {
			views = append(views, after)
		}
		return nil
	})
	if err != nil {
		return Shot{}, err
	}
	decoded, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return Shot{}, fmt.Errorf("browser: screenshot: the browser's picture is not a PNG: %w", err)
	}
	img := image.NewRGBA(decoded.Bounds().Sub(decoded.Bounds().Min))
	draw.Draw(img, img.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
	masked := paintMasks(img, s.masks, views)
	w, h := fit(img.Bounds().Dx(), img.Bounds().Dy(), o)
	if w != img.Bounds().Dx() || h != img.Bounds().Dy() {
		img = shrink(img, w, h)
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: shotQuality}); err != nil {
		return Shot{}, fmt.Errorf("browser: screenshot: encoding %d×%d as JPEG: %w", w, h, err)
	}
	return Shot{Data: out.Bytes(), MIME: "image/jpeg", Width: w, Height: h, Masked: masked}, nil
}

// view is where the viewport stands on the page, in CSS pixels.
type view struct{ x, y, w, h float64 }

func viewNow(ctx context.Context) (view, error) {
	m, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return view{}, err
	}
	vp := m.CSSVisualViewport
	if vp == nil || vp.ClientWidth <= 0 || vp.ClientHeight <= 0 {
		return view{}, fail("screenshot", "", ErrRefused, "the browser gave no viewport to place the masks by")
	}
	return view{vp.PageX, vp.PageY, vp.ClientWidth, vp.ClientHeight}, nil
}

// paintMasks paints each region black where it stands in each view, and
// counts those that showed. The image is the viewport in device pixels:
// one CSS pixel is as many as the image has per viewport pixel, the
// smaller of the two ratios, since scrollbars (in the image, not in the
// viewport's size) only ever make one larger.
func paintMasks(img *image.RGBA, masks []rect, views []view) int {
	b := img.Bounds()
	n := 0
	for _, m := range masks {
		painted := false
		for _, v := range views {
			scale := min(float64(b.Dx())/v.w, float64(b.Dy())/v.h)
			px := func(c, origin float64) int {
				return int(math.Max(-1, math.Min(1<<20, (c-origin)*scale)))
			}
			r := image.Rect(px(m.x0-maskPad, v.x), px(m.y0-maskPad, v.y), px(m.x1+maskPad, v.x)+1, px(m.y1+maskPad, v.y)+1).Intersect(b)
			if r.Empty() {
				continue
			}
			draw.Draw(img, r, image.NewUniform(color.Black), image.Point{}, draw.Src)
			painted = true
		}
		if painted {
			n++
		}
	}
	return n
}

// fit is the size w×h scales down to within o, keeping its shape.
func fit(w, h int, o ShotOptions) (int, int) {
	f := 1.0
	if o.MaxPixels > 0 && w*h > o.MaxPixels {
		f = min(f, math.Sqrt(float64(o.MaxPixels)/float64(w*h)))
	}
	if o.MaxSide > 0 && max(w, h) > o.MaxSide {
		f = min(f, float64(o.MaxSide)/float64(max(w, h)))
	}
	if f >= 1 {
		return w, h
	}
	nw, nh := max(1, int(float64(w)*f)), max(1, int(float64(h)*f))
	for o.MaxPixels > 0 && nw*nh > o.MaxPixels && (nw > 1 || nh > 1) { // rounding's last pixel
		if nw >= nh {
			nw--
		} else {
			nh--
		}
	}
	return nw, nh
}

// shrink scales src down to w×h, each pixel the average of the source
// pixels it covers, weighted by how much of each. golang.org/x/image's
// filters are not among the module's dependencies; for scaling down an
// area average is what they would do, with no ringing on text's edges.
func shrink(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	xs, ys := taps(sw, w), taps(sh, h)
	// Across first, into sh rows of w pixels, then down.
	rows := make([]float32, sh*w*4)
	for y := range sh {
		line := src.Pix[y*src.Stride:]
		for x, ts := range xs {
			var acc [4]float32
			for _, t := range ts {
				p := line[t.at*4:]
				for c := range 4 {
					acc[c] += t.weight * float32(p[c])
				}
			}
			copy(rows[(y*w+x)*4:], acc[:])
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y, ts := range ys {
		for x := range w {
			var acc [4]float32
			for _, t := range ts {
				p := rows[(t.at*w+x)*4:]
				for c := range 4 {
					acc[c] += t.weight * p[c]
				}
			}
			q := dst.Pix[y*dst.Stride+x*4:]
			for c := range 4 {
				q[c] = uint8(min(255, acc[c]+0.5))
			}
		}
	}
	return dst
}

// tap is one source pixel's share of a destination pixel.
type tap struct {
	at     int
	weight float32
}

// taps are, for each of n destination pixels, the source pixels (of m)
// it covers and their shares, which add up to 1.
func taps(m, n int) [][]tap {
	out := make([][]tap, n)
	step := float64(m) / float64(n)
	for i := range out {
		a, b := float64(i)*step, float64(i+1)*step
		for k := int(a); k < m && float64(k) < b; k++ {
			if cover := min(b, float64(k+1)) - max(a, float64(k)); cover > 0 {
				out[i] = append(out[i], tap{k, float32(cover / step)})
			}
		}
	}
	return out
}
