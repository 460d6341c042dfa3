// Package caps measures what per-type answer caps are worth: each call
// type's charge against the rate limit with its own cap and with a flat
// one, weighed by the agent mix of package calltypes.
package caps

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Row is one call type's charge against the rate limit: per call, with
// its own cap and with a flat one, next to what it really used.
type Row struct {
	Type        string `json:"type"`
	Weight      int    `json:"weight"` // calls of the type in the mix
	MaxTokens   int64  `json:"max_tokens"`
	Charged     int64  `json:"charged"`      // reserved per call with its cap (Azure charges alike)
	FlatCharged int64  `json:"flat_charged"` // reserved per call with the flat cap
	Used        int64  `json:"used"`         // what the call used
	// StablePrefix is the o200k tokens of the part of the type's prompt
	// that stays the same for a task (calltypes.Type.StablePrefix), and
	// Cacheable whether it reaches the 1,024 a prompt cache starts at.
	StablePrefix int  `json:"stable_prefix"`
	Cacheable    bool `json:"cacheable"`
	// WithLow and WithHigh are what a call charges with a 1280×800
	// screenshot at detail low and high on gpt-4o, the family most vision
	// deployments run: Charged plus the image's tokens.
	WithLow  int64 `json:"with_screenshot_low"`
	WithHigh int64 `json:"with_screenshot_high"`
}

// CacheMinimum is the prompt length from which Azure caches a prefix.
const CacheMinimum = 1024

// Viewport is the screenshot vision prices: the browser's default window
// (its viewport, 1280×657, is a little shorter and takes the same tiles).
var Viewport = [2]int{1280, 800}

// stablePrefix is the o200k tokens of t's stable prefix for in, with the
// chat format's overhead of each message (but not the reply's primer,
// which ends a prompt).
func stablePrefix(t calltypes.Type, in json.RawMessage) int {
	system, user := t.StablePrefix(in)
	msgs := []tokens.Message{{Role: "system", Content: system}}
	if user != "" {
		msgs = append(msgs, tokens.Message{Role: "user", Content: user})
	}
	return tokens.Chat(msgs) - tokens.ReplyPrimer
}

// Measure runs one call of each type of calltypes.AgentMix with the
// type's example input, once with the type's shipped cap
// (calltypes.Default) and once with flat, and returns the rows and the
// throughput factor: how many more calls of the mix a deployment admits a
// minute with the types' caps than with the flat one.
func Measure(ctx context.Context, disp *llm.Dispatcher, flat int64) ([]Row, float64, error) {
	mix := calltypes.AgentMix()
	shipped := calltypes.Default()
	flatTypes := calltypes.Default()
	for _, s := range mix {
		if err := flatTypes.Override(s.Type, calltypes.Override{MaxTokens: flat}); err != nil {
			return nil, 0, err
		}
	}
	tuned := &llm.Caller{Types: shipped, Dispatcher: disp}
	flatCaller := &llm.Caller{Types: flatTypes, Dispatcher: disp}
	var rows []Row
	var charged, flatCharged int64
	for _, s := range mix {
		t, ok := shipped.Lookup(s.Type)
		if !ok {
			return nil, 0, fmt.Errorf("%s is not a registered call type", s.Type)
		}
		example, ok := calltypes.ExampleInput(s.Type)
		if !ok {
			return nil, 0, fmt.Errorf("no example input for %s", s.Type)
		}
		in, err := json.Marshal(example)
		if err != nil {
			return nil, 0, fmt.Errorf("%s's example input: %w", s.Type, err)
		}
		_, a, err := tuned.Call(ctx, t.Name, in, llm.CallOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", t.Name, err)
		}
		_, b, err := flatCaller.Call(ctx, t.Name, in, llm.CallOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s with a flat cap: %w", t.Name, err)
		}
		prefix := stablePrefix(t, in)
		image := func(detail string) int64 {
			w, h := Viewport[0], Viewport[1]
			if detail == calltypes.DetailLow { // sent at the side the model reads it at
				w, h = calltypes.LowDetailSide, calltypes.LowDetailSide*h/w
			}
			return models.ImageTokens("gpt-4o", w, h, detail)
		}
		rows = append(rows, Row{Type: t.Name, Weight: s.Calls, MaxTokens: t.MaxTokens, Charged: a.TokensReserved, FlatCharged: b.TokensReserved, Used: a.TokensUsed,
			StablePrefix: prefix, Cacheable: prefix >= CacheMinimum,
			WithLow: a.TokensReserved + image(calltypes.DetailLow), WithHigh: a.TokensReserved + image(calltypes.DetailHigh)})
		charged += int64(s.Calls) * a.TokensReserved
		flatCharged += int64(s.Calls) * b.TokensReserved
	}
	if charged == 0 {
		return nil, 0, fmt.Errorf("no call of the mix was measured")
	}
	return rows, float64(flatCharged) / float64(charged), nil
}
