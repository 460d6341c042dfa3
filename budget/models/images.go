package models

import (
	"math"
	"strings"
)

// Image detail levels a chat request may ask for. "auto" lets the model
// choose, so it is priced as high: a reservation errs on the side that
// admits no more than Azure does.
const (
	DetailLow  = "low"
	DetailHigh = "high"
	DetailAuto = "auto"
)

// ImageRule is how a model family counts an image's tokens, from the
// published vision pricing of the OpenAI models Azure serves.
//
// Tile models scale an image to fit 2048×2048, then its short side to
// 768, and charge Base plus PerTile for each 512-px tile; at detail low,
// Base alone. Patch models cut it into 32-px patches, scaled down until
// at most MaxPatches fit, and charge the patches times Multiplier,
// whatever the detail.
//
// Sources: the OpenAI images and vision guide ("Calculating costs": the
// tile table and the patch multipliers), and a community measurement of
// gpt-4.1-mini billed 2,488 tokens for a 4000×1474 image, the 1,536-patch
// cap times 1.62. How Azure's admission counts an image is not published
// (API Management assumes 1,200 a picture); budget calibrate measures it.
type ImageRule struct {
	Prefix     string // model name prefix, lower case
	Base       int64
	PerTile    int64
	MaxPatches int64   // 0: a tile model
	Multiplier float64 // patch models only
}

// imageRules, longest prefix first where one prefix holds another.
var imageRules = []ImageRule{
	{Prefix: "gpt-4.1-mini", MaxPatches: 1536, Multiplier: 1.62},
	{Prefix: "gpt-4.1-nano", MaxPatches: 1536, Multiplier: 2.46},
	{Prefix: "gpt-5-mini", MaxPatches: 1536, Multiplier: 1.62},
	{Prefix: "gpt-5-nano", MaxPatches: 1536, Multiplier: 2.46},
	{Prefix: "o4-mini", MaxPatches: 1536, Multiplier: 1.72},
	{Prefix: "gpt-4o-mini", Base: 2833, PerTile: 5667},
	{Prefix: "gpt-4o", Base: 85, PerTile: 170},
	{Prefix: "gpt-4.1", Base: 85, PerTile: 170},
	{Prefix: "gpt-4.5", Base: 85, PerTile: 170},
	{Prefix: "gpt-5", Base: 70, PerTile: 140},
	{Prefix: "o1", Base: 75, PerTile: 150},
	{Prefix: "o3", Base: 75, PerTile: 150},
}

// defaultImageRule prices an image for a model the table does not know:
// the gpt-4o family's tiles, the rule most of Azure's vision models use.
var defaultImageRule = ImageRule{Base: 85, PerTile: 170}

// ImageRuleFor is the rule model counts images by, and whether the table
// knows the model (an unknown one is priced as gpt-4o).
func ImageRuleFor(model string) (ImageRule, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, r := range imageRules {
		if strings.HasPrefix(m, r.Prefix) {
			return r, true
		}
	}
	return defaultImageRule, false
}

// ImageRulePrefixes lists the model name prefixes the table prices, for
// the test that the simulator's table agrees.
func ImageRulePrefixes() []string {
	out := make([]string, len(imageRules))
	for i, r := range imageRules {
		out[i] = r.Prefix
	}
	return out
}

// ImageTokens is what model counts for a width×height image sent at
// detail (low, high or auto; "" is auto).
func ImageTokens(model string, width, height int, detail string) int64 {
	r, _ := ImageRuleFor(model)
	return r.Tokens(width, height, detail)
}

// Tokens is what the rule counts for a width×height image at detail.
func (r ImageRule) Tokens(width, height int, detail string) int64 {
	if width <= 0 || height <= 0 {
		return 0
	}
	if r.MaxPatches > 0 {
		return int64(math.Ceil(float64(patches(width, height, r.MaxPatches)) * r.Multiplier))
	}
	if detail == DetailLow {
		return r.Base
	}
	w, h := fitTiles(float64(width), float64(height))
	tiles := int64(math.Ceil(w/512)) * int64(math.Ceil(h/512))
	return r.Base + r.PerTile*tiles
}

// fitTiles scales an image as tile models do before they count tiles:
// into a 2048-px square, then its short side down to 768. Neither step
// makes an image larger.
func fitTiles(w, h float64) (float64, float64) {
	if s := 2048 / max(w, h); s < 1 {
		w, h = w*s, h*s
	}
	if s := 768 / min(w, h); s < 1 {
		w, h = w*s, h*s
	}
	return math.Floor(w), math.Floor(h)
}

// patches is how many 32-px patches cover the image, at most limit. The
// published recipe scales a larger image down until it fits fewer than
// limit whole patches, but a measured bill (4000×1474 on gpt-4.1-mini:
// 2,488 tokens) is the cap itself, so the cap is what is counted.
func patches(width, height int, limit int64) int64 {
	n := int64(math.Ceil(float64(width)/32) * math.Ceil(float64(height)/32))
	return min(n, limit)
}
