// Package fleet runs a cold-start fleet: many browser agents' worth of
// callers, split over several OS processes that share one Redis, all
// starting in the same second against three deployments of unequal quota
// with demand above supply, and compares routing strategies side by side.
package fleet

import (
	"math/rand/v2"
	"strings"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// kind is one call type of a browser agent's mix: how large its prompt is
// and what it declares as its answer cap.
type kind struct {
	name      string
	weight    int
	promptLen int // characters
	maxTokens int64
}

// mix is a browser agent's calls: a plan at the start, then a pick and a
// check each step, and a summary at the end.
var mix = []kind{
	{"planning", 1, 2000, 256},
	{"click-pick", 5, 6000, 64},
	{"yes-no", 4, 3000, 16},
	{"summarize", 1, 5000, 512},
}

var pageText = strings.Repeat("Search results for running shoes: 24 items. Filter by size, colour, price. ", 100)

func pick(rng *rand.Rand) kind {
	total := 0
	for _, k := range mix {
		total += k.weight
	}
	n := rng.IntN(total)
	for _, k := range mix {
		if n < k.weight {
			return k
		}
		n -= k.weight
	}
	return mix[0]
}

// prompt is the call's user message.
func (k kind) prompt() string { return pageText[:k.promptLen] }

// cost is what Azure charges the call at admission, computed the way it
// does: reserving exactly that lets the router fill the allowance to the
// margin and no further.
func (k kind) cost() int64 {
	return int64(tokens.CharEstimate([]tokens.Message{{Role: "user", Content: k.prompt()}})) + k.maxTokens
}
