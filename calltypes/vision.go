package calltypes

import (
	"fmt"
	"slices"
)

// Vision says when a type's calls carry the page's screenshot beside its
// text view. A screenshot shows what the words do not (a canvas, a chart,
// an icon-only toolbar, a layout) and costs what its pixels do: 85
// tokens at detail low on gpt-4o, 1,105 at high for a 1280×800 viewport.
type Vision string

// The vision modes.
const (
	// VisionNever sends text alone: the default.
	VisionNever Vision = "never"
	// VisionAuto sends the screenshot when the text view is thin: pixels
	// the words do not describe cover much of the viewport, the page's
	// elements have no words, or the last action changed nothing.
	VisionAuto Vision = "auto"
	// VisionAlways sends it with every call that reads a page.
	VisionAlways Vision = "always"
)

var visions = []Vision{VisionNever, VisionAuto, VisionAlways}

// Valid reports whether v is a vision mode ("" is never).
func (v Vision) Valid() bool { return v == "" || slices.Contains(visions, v) }

// Image details, as a chat request's image part names them. Low is one
// 512-px look, a fixed price; high reads the image in 512-px tiles, a
// price by size; auto lets the model choose and is priced as high.
const (
	DetailLow  = "low"
	DetailHigh = "high"
	DetailAuto = "auto"
)

// DefaultDetail is the detail of a type that sets none: the cheapest
// look, which is what tells a canvas or a layout apart; a type that must
// read small print in the pixels asks for high.
const DefaultDetail = DetailLow

// DefaultImagePixels bounds a screenshot's pixels when a type sets no
// bound of its own: a 1280×800 viewport fits whole. LowDetailSide is the
// longest side a detail-low image needs: the model looks at 512×512, so
// more pixels cost bytes and buy nothing.
const (
	DefaultImagePixels = 1 << 20
	MinImagePixels     = 64 * 64
	LowDetailSide      = 512
)

// Image is a picture a call carries: the page's screenshot, encoded, its
// size in pixels, and the detail it is sent at. The budget prices it by
// its size and detail, by the rule of the deployment's model family.
type Image struct {
	MIME   string `json:"mime"`
	Data   []byte `json:"data"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Detail string `json:"detail"`
}

// Service tiers a call type may ask for. Flex is cheaper and slower with
// no latency promise, fit for calls that can wait (a summary, a
// background task's calls); priority is faster and dearer. A deployment
// whose model lacks the tier answers 400, and the call is sent once more
// on the default tier.
const (
	TierDefault  = ""
	TierFlex     = "flex"
	TierPriority = "priority"
)

// IsTier reports whether s is a service tier a type may set.
func IsTier(s string) bool { return s == TierDefault || s == TierFlex || s == TierPriority }

// checkVision checks a type's vision settings and fills in their
// defaults.
func checkVision(t Type) (Type, error) {
	switch {
	case !t.Vision.Valid():
		return t, fmt.Errorf("vision %q is unknown: use never, auto or always", t.Vision)
	case t.Detail != "" && t.Detail != DetailLow && t.Detail != DetailHigh && t.Detail != DetailAuto:
		return t, fmt.Errorf("detail %q is unknown: use low, high or auto", t.Detail)
	case t.ImagePixels < 0:
		return t, fmt.Errorf("image_pixels %d is negative: leave it out for %d", t.ImagePixels, DefaultImagePixels)
	case t.ImagePixels > 0 && t.ImagePixels < MinImagePixels:
		return t, fmt.Errorf("image_pixels %d is too few to show a page: give at least %d", t.ImagePixels, MinImagePixels)
	case !IsTier(t.ServiceTier):
		return t, fmt.Errorf("service_tier %q is unknown: use flex or priority, or leave it out for the default tier", t.ServiceTier)
	}
	if t.Vision == "" {
		t.Vision = VisionNever
	}
	if t.Detail == "" {
		t.Detail = DefaultDetail
	}
	if t.ImagePixels == 0 {
		t.ImagePixels = DefaultImagePixels
	}
	return t, nil
}

// ImageSide is the longest side a screenshot for t needs: LowDetailSide
// at detail low, else no bound beyond its pixels (0).
func (t Type) ImageSide() int {
	if t.Detail == DetailLow {
		return LowDetailSide
	}
	return 0
}
