package azuresim

import (
	"math"
	"strings"
)

// The simulator's own table of how Azure's models count an image's
// tokens, kept apart from the budget client's as the quota table is: a
// test checks the two agree.
//
// Tile models fit an image into 2048×2048, then bring its short side down
// to 768 (neither step enlarges it), and count base plus perTile for each
// 512-px tile; at detail low, base alone. Patch models cover the image
// with 32-px patches, at most maxPatches of them, and count the patches
// times multiplier, rounded up, whatever the detail. The figures are the
// published vision pricing of the OpenAI models Azure serves.

// imageRule is one model family's way of counting an image.
type imageRule struct {
	prefix     string // model name prefix, lower case
	base       int64
	perTile    int64
	maxPatches int64   // 0 for a tile model
	multiplier float64 // patch models only
}

// imageRules is searched in order, so a prefix that holds another
// (gpt-4o-mini, gpt-4o) comes first.
var imageRules = []imageRule{
	{prefix: "gpt-4.1-mini", maxPatches: 1536, multiplier: 1.62},
	{prefix: "gpt-4.1-nano", maxPatches: 1536, multiplier: 2.46},
	{prefix: "gpt-5-mini", maxPatches: 1536, multiplier: 1.62},
	{prefix: "gpt-5-nano", maxPatches: 1536, multiplier: 2.46},
	{prefix: "o4-mini", maxPatches: 1536, multiplier: 1.72},
	{prefix: "gpt-4o-mini", base: 2833, perTile: 5667},
	{prefix: "gpt-4o", base: 85, perTile: 170},
	{prefix: "gpt-4.1", base: 85, perTile: 170},
	{prefix: "gpt-4.5", base: 85, perTile: 170},
	{prefix: "gpt-5", base: 70, perTile: 140},
	{prefix: "o1", base: 75, perTile: 150},
	{prefix: "o3", base: 75, perTile: 150},
}

// gpt4oImages prices an image on a model the table does not know: most
// of Azure's vision models count tiles as gpt-4o does.
var gpt4oImages = imageRule{base: 85, perTile: 170}

func imageRuleFor(model string) imageRule {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, r := range imageRules {
		if strings.HasPrefix(m, r.prefix) {
			return r
		}
	}
	return gpt4oImages
}

// ImageRulePrefixes lists the model name prefixes the simulator's image
// table prices; any other model counts images as gpt-4o.
func ImageRulePrefixes() []string {
	out := make([]string, len(imageRules))
	for i, r := range imageRules {
		out[i] = r.prefix
	}
	return out
}

// ImageTokens is what model counts for a width×height image sent at
// detail: low, high or auto ("" is auto, and auto is counted as high).
func ImageTokens(model string, width, height int, detail string) int64 {
	if width <= 0 || height <= 0 {
		return 0
	}
	r := imageRuleFor(model)
	if r.maxPatches > 0 {
		n := int64(math.Ceil(float64(width)/32) * math.Ceil(float64(height)/32))
		return int64(math.Ceil(float64(min(n, r.maxPatches)) * r.multiplier))
	}
	if detail == "low" {
		return r.base
	}
	w, h := float64(width), float64(height)
	if s := 2048 / max(w, h); s < 1 {
		w, h = w*s, h*s
	}
	if s := 768 / min(w, h); s < 1 {
		w, h = w*s, h*s
	}
	tiles := int64(math.Ceil(math.Floor(w)/512)) * int64(math.Ceil(math.Floor(h)/512))
	return r.base + r.perTile*tiles
}
