package llm

import (
	"context"
	"fmt"

	"github.com/headroom-agent/headroom/calltypes"
)

// AgentMix is a browser agent's calls for a ten-step task: a plan, a pick
// and a check each step, and a summary.
var AgentMix = map[string]int{"planning": 1, "click-pick": 10, "yes-no": 10, "summarize": 1}

// CapsRow is one call type's charge against the rate limit: per call,
// with its own cap and with a flat one, next to what it really used.
type CapsRow struct {
	Type        string `json:"type"`
	Weight      int    `json:"weight"` // calls of the type in the mix
	MaxTokens   int64  `json:"max_tokens"`
	Charged     int64  `json:"charged"`      // reserved per call with its cap (Azure charges alike)
	FlatCharged int64  `json:"flat_charged"` // reserved per call with the flat cap
	Used        int64  `json:"used"`         // what the call used
}

// MeasureCaps runs one call of each type in mix with its input, once with
// the type's cap and once with flat, and returns the rows and the
// throughput factor: how many more calls of the mix a deployment admits a
// minute with the types' caps than with the flat one.
func MeasureCaps(ctx context.Context, disp *Dispatcher, inputs map[string]any, mix map[string]int, flat int64) ([]CapsRow, float64, error) {
	tuned := &Caller{Types: calltypes.Default(), Dispatcher: disp}
	flatTypes := calltypes.Default()
	for name := range mix {
		if err := flatTypes.Override(name, calltypes.Override{MaxTokens: flat}); err != nil {
			return nil, 0, err
		}
	}
	flatCaller := &Caller{Types: flatTypes, Dispatcher: disp}
	var rows []CapsRow
	var charged, flatCharged int64
	for _, t := range calltypes.Default().Types() {
		w, ok := mix[t.Name]
		if !ok {
			continue
		}
		in, ok := inputs[t.Name]
		if !ok {
			return nil, 0, fmt.Errorf("no input for %s", t.Name)
		}
		_, a, err := tuned.Call(ctx, t.Name, in, CallOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", t.Name, err)
		}
		_, b, err := flatCaller.Call(ctx, t.Name, in, CallOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s with a flat cap: %w", t.Name, err)
		}
		rows = append(rows, CapsRow{Type: t.Name, Weight: w, MaxTokens: t.MaxTokens, Charged: a.TokensReserved, FlatCharged: b.TokensReserved, Used: a.TokensUsed})
		charged += int64(w) * a.TokensReserved
		flatCharged += int64(w) * b.TokensReserved
	}
	if charged == 0 {
		return nil, 0, fmt.Errorf("no call of the mix was measured")
	}
	return rows, float64(flatCharged) / float64(charged), nil
}
