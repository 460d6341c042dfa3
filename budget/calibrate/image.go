package calibrate

import (
	"context"
	"errors"
)

// ImageCharge is what Azure's admission charged one image, read from
// x-ratelimit-remaining-tokens, against its published count.
type ImageCharge struct {
	// Charged is the drop a cap-1 call with the image made, less what the
	// same call without it costs: the image's admission charge. Both
	// samples agree within a few tokens, or there is no ImageCharge.
	Charged int64 `json:"charged"`
	// Published is the image's count by the model's published rule
	// (budget/models), what headroom reserves when told nothing more.
	Published int64 `json:"published"`
	// Recommendation is the image_admission the deployment should set:
	// Charged where admission charges more than the published count; 0
	// (leave it out) otherwise.
	Recommendation int64 `json:"recommendation"`
	// Error says why no charge was read, when none was.
	Error string `json:"error,omitempty"`
}

// ImageSamples is how many image calls are read, two agreeing being
// what tells a clean reading from another client's traffic; ImageCalls
// is the calls the image's reading makes in all.
const (
	ImageSamples = 2
	ImageCalls   = 2*ImageSamples + 1
)

// image reads what admission charges an image: around each image call
// a cap-1 call without it, all in one token window; the drop across the
// image call, less small (what a cap-1 call without it costs), is the
// image's charge. A round whose readings do not agree is run once more.
func (c *cal) image(ctx context.Context, small int64) *ImageCharge {
	var last error
	for range 2 {
		ic, err := c.imageRound(ctx, small)
		if err == nil {
			return ic
		}
		var u *unclean
		if !errors.As(err, &u) {
			return &ImageCharge{Error: err.Error()}
		}
		last = err
		c.o.Logf("%s: image: %s: once more", c.d.Name, u.msg)
	}
	return &ImageCharge{Error: "the readings were not clean twice (" + last.Error() + "): calibrate when the deployment is idle"}
}

func (c *cal) imageRound(ctx context.Context, small int64) (*ImageCharge, error) {
	first, err := c.call(ctx, 1)
	if err != nil {
		return nil, err
	}
	rs := []reading{first}
	for range ImageSamples {
		withImage, err := c.send(ctx, c.o.ImageExchange, 1)
		if err != nil {
			return nil, err
		}
		after, err := c.call(ctx, 1)
		if err != nil {
			return nil, err
		}
		rs = append(rs, withImage, after)
	}
	if c.index(rs[0].sent) != c.index(rs[len(rs)-1].got) {
		return nil, uncleanf("a token window ended between the image's readings")
	}
	rem := func(i int) int64 { return rs[i].fb.RemainingTokens }
	ic := &ImageCharge{Published: rs[1].a.ImageTokens}
	var charges []int64
	for j := range ImageSamples {
		pre, img, post := 2*j, 2*j+1, 2*j+2
		charge := rem(pre) - rem(img) - small
		if after := rem(img) - rem(post); after < small/2 || after > 2*small+2 {
			return nil, uncleanf("a cap-1 call after the image cost %d tokens where one costs %d: another client's calls fell between the readings", after, small)
		}
		if charge < 0 {
			return nil, uncleanf("remaining tokens went from %d to %d across an image call: the window was reset", rem(pre), rem(img))
		}
		charges = append(charges, charge)
	}
	if d := charges[1] - charges[0]; d > 2+charges[0]/20 || d < -2-charges[0]/20 {
		return nil, uncleanf("two identical image calls were charged %d and %d", charges[0], charges[1])
	}
	ic.Charged = (charges[0] + charges[1]) / 2
	if ic.Charged > ic.Published {
		ic.Recommendation = ic.Charged
	}
	return ic, nil
}

// summary says what the image's readings mean for the deployment's
// config, in a sentence.
func (ic *ImageCharge) summary(deployment string) string {
	switch {
	case ic.Error != "":
		return "the image's admission charge was not read: " + ic.Error + "."
	case ic.Recommendation > 0:
		return thousands.Sprintf("admission charged an image %d tokens where its published count is %d, so screenshots are reserved short: set %s on %s.", ic.Charged, ic.Published, setting("image_admission", ic.Recommendation), deployment)
	}
	return thousands.Sprintf("admission charged an image %d tokens, within its published count of %d: the published count is reserved, and image_admission is not needed.", ic.Charged, ic.Published)
}
