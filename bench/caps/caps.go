// Package caps measures what per-type answer caps are worth: each call
// type's charge against the rate limit with its own cap and with a flat
// one, weighed by the agent mix of package calltypes.
package caps

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
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
		rows = append(rows, Row{Type: t.Name, Weight: s.Calls, MaxTokens: t.MaxTokens, Charged: a.TokensReserved, FlatCharged: b.TokensReserved, Used: a.TokensUsed})
		charged += int64(s.Calls) * a.TokensReserved
		flatCharged += int64(s.Calls) * b.TokensReserved
	}
	if charged == 0 {
		return nil, 0, fmt.Errorf("no call of the mix was measured")
	}
	return rows, float64(flatCharged) / float64(charged), nil
}
