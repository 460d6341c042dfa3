package llm

import (
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
)

// reasoningAllowance is the room given to reasoning at each effort on a
// reasoning model, on top of a type's visible cap, when the type sets no
// reasoning_tokens of its own. A config's reasoning_tokens changes it per
// effort. It is generous on purpose: a cap spent on reasoning leaves no
// answer at all, and Azure charges the whole cap at admission either way.
var reasoningAllowance = map[string]int64{"minimal": 256, "low": 1024, "medium": 4096, "high": 16384}

// ReasoningAllowance is the room given to reasoning at effort when
// neither the type nor the config sets one; 0 for an unknown effort.
func ReasoningAllowance(effort string) int64 { return reasoningAllowance[effort] }

// Shape is how the caller's requests are written for the model behind
// them: its family from the family table (budget/models). The zero value
// is a chat model.
type Shape struct {
	Model models.Info
	// ModelName is the pool's model as deployed (gpt-4o, gpt-4.1-mini):
	// what prices an image, which the family table does not tell apart.
	// "" prices as gpt-4o.
	ModelName string
	// ImageAdmission is what the pool's admission charges an image, when
	// measured (budget calibrate): the largest of its deployments'; 0 is
	// the model's published count.
	ImageAdmission int64
	// Allowance overrides ReasoningAllowance per effort.
	Allowance map[string]int64
}

// Reasoning reports whether requests are shaped for a reasoning model.
func (s Shape) Reasoning() bool { return s.Model.Family == models.Reasoning }

// effort is the reasoning_effort sent for t: the type's, low when it sets
// none, and low for minimal on a model that does not take minimal.
func (s Shape) effort(t calltypes.Type) string {
	e := t.ReasoningEffort
	if e == "" {
		e = "low"
	}
	if !s.Model.Accepts(e) && e == "minimal" {
		e = "low"
	}
	if !s.Model.Accepts(e) {
		return "" // a model that takes no effort at all
	}
	return e
}

// reasoningTokens is the room for reasoning a call of t gets.
func (s Shape) reasoningTokens(t calltypes.Type) int64 {
	if !s.Reasoning() {
		return 0
	}
	if t.ReasoningTokens > 0 {
		return t.ReasoningTokens
	}
	e := s.effort(t) // what is sent: low where the model has no minimal
	if e == "" {
		e = "low"
	}
	if n, ok := s.Allowance[e]; ok {
		return n
	}
	return reasoningAllowance[e]
}

// Cap is what a call of t is capped at, and reserved on, for a visible
// answer of visible tokens: the answer plus the reasoning allowance on a
// reasoning model, since Azure counts both inside the cap.
func (s Shape) Cap(t calltypes.Type, visible int64) int64 {
	return visible + s.reasoningTokens(t)
}

// apply writes the cap, temperature and effort into p the way the model
// takes them: max_tokens and temperature for a chat model;
// max_completion_tokens, reasoning_effort and no temperature for a
// reasoning one (which refuses the others with a 400).
func (s Shape) apply(p *openai.ChatCompletionNewParams, t calltypes.Type, cap int64) {
	if !s.Reasoning() {
		p.MaxTokens = openai.Int(cap)
		p.Temperature = openai.Float(t.Temperature)
		return
	}
	p.MaxCompletionTokens = openai.Int(cap)
	if e := s.effort(t); e != "" {
		p.ReasoningEffort = shared.ReasoningEffort(e)
	}
}

// ReasoningTruncatedError is an answer whose whole cap went to reasoning:
// finish_reason "length" with nothing written. It is a different knob
// from an answer cut short.
type ReasoningTruncatedError struct {
	Type       string
	Deployment string
	MaxTokens  int64 // the cap sent
	Reasoning  int64 // what reasoning used
	Effort     string
}

func (e *ReasoningTruncatedError) Error() string {
	return fmt.Sprintf("llm: the %s call spent its whole cap of %d tokens reasoning (%d reasoning tokens at effort %q on %s) before writing an answer: raise calltypes.%s.reasoning_tokens, or lower its reasoning_effort",
		e.Type, e.MaxTokens, e.Reasoning, e.Effort, e.Deployment, e.Type)
}
