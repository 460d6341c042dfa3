package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

func heuristicModels() map[string]azuresim.Model {
	return map[string]azuresim.Model{"heuristic": heuristic.Model{}}
}

// Each family gets the request it takes, over real HTTP to the
// simulator: max_tokens and temperature for gpt-4o; max_completion_tokens,
// reasoning_effort and no temperature for o4-mini and gpt-5-mini, capped
// and reserved on the answer plus the reasoning allowance, and the
// reasoning the answer spent in the report.
func TestRequestsFollowTheModelFamily(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		model, effort string
		cap           int64
	}{
		{"gpt-4o", "", 64},
		{"o4-mini", "low", 64 + 1024}, // o-series has no minimal: low
		{"gpt-5-mini", "minimal", 64 + 256},
	} {
		sc := newModelCaller(t, azuresim.Deployment{Model: c.model, Reply: "heuristic"}, nil, heuristicModels())
		_, rep, err := sc.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		b := sc.bodies[len(sc.bodies)-1]
		_, hasMax := b["max_tokens"]
		_, hasTemp := b["temperature"]
		switch c.effort {
		case "":
			if !hasMax || !hasTemp || b["max_tokens"] != float64(c.cap) || b["max_completion_tokens"] != nil || b["reasoning_effort"] != nil {
				t.Errorf("%s: body %v", c.model, b)
			}
		default:
			if hasMax || hasTemp || b["max_completion_tokens"] != float64(c.cap) || b["reasoning_effort"] != c.effort {
				t.Errorf("%s: body %v, want max_completion_tokens %d and effort %s only", c.model, b, c.cap, c.effort)
			}
			if rep.ReasoningTokens == 0 || rep.ReasoningEffort != c.effort {
				t.Errorf("%s: report %+v, want reasoning tokens and effort", c.model, rep)
			}
		}
		if rep.MaxTokens != c.cap || rep.TokensReserved < c.cap {
			t.Errorf("%s: report cap %d, reserved %d; want cap %d reserved on", c.model, rep.MaxTokens, rep.TokensReserved, c.cap)
		}
	}
}

// A cap the reasoning eats whole is its own error, counted apart and
// naming the knob; a config's reasoning_tokens is that knob.
func TestReasoningThatEatsTheCapIsCountedApart(t *testing.T) {
	ctx := context.Background()
	thinker := azuresim.Deployment{Model: "o4-mini", Reply: "heuristic", ReasoningTokens: map[string]int64{"low": 3000}}
	sc := newModelCaller(t, thinker, nil, heuristicModels())
	_, _, err := sc.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{})
	var rt *ReasoningTruncatedError
	if !errors.As(err, &rt) || !strings.Contains(err.Error(), "calltypes.yes-no.reasoning_tokens") {
		t.Fatalf("err = %v, want a ReasoningTruncatedError naming reasoning_tokens", err)
	}
	st := sc.Stats()[calltypes.YesNo]
	if st.ReasoningTruncated != 1 || st.Truncated != 0 || st.ReasoningTruncatedBy["d"] != 1 {
		t.Errorf("stats %+v, want one reasoning truncation on d, no other", st)
	}

	roomy := newModelCaller(t, thinker, func(f *config.File) {
		f.CallTypes = map[string]calltypes.Override{calltypes.YesNo: {ReasoningTokens: 4000}}
	}, heuristicModels())
	if _, rep, err := roomy.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{}); err != nil || rep.MaxTokens != 64+4000 || rep.ReasoningTokens != 3000 {
		t.Errorf("with reasoning_tokens 4000: %+v, %v", rep, err)
	}
	byEffort := newModelCaller(t, thinker, func(f *config.File) { f.ReasoningTokens = map[string]int64{"low": 5000} }, heuristicModels())
	if _, rep, err := byEffort.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{}); err != nil || rep.MaxTokens != 64+5000 {
		t.Errorf("with reasoning_tokens {low: 5000}: %+v, %v", rep, err)
	}
}

// The old request shape meets the simulator's 400 on a reasoning model.
func TestTheChatShapeIsRefusedByAReasoningModel(t *testing.T) {
	sc := newModelCaller(t, azuresim.Deployment{Model: "o4-mini", Reply: "heuristic"}, nil, heuristicModels())
	sc.Shape = Shape{} // as every request was written before model families
	_, _, err := sc.Call(context.Background(), calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "max_completion_tokens") {
		t.Errorf("err = %v, want Azure's 400 for max_tokens", err)
	}
}
