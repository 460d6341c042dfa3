package llm

import (
	"fmt"

	"github.com/openai/openai-go/v3"
)

// TruncatedError is an answer cut at its cap (finish_reason "length").
type TruncatedError struct {
	Type      string
	MaxTokens int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("llm: the %s answer was cut at its cap of %d tokens: raise max_tokens for %s", e.Type, e.MaxTokens, e.Type)
}

// read takes the answer's text from a chat completion of req, and adds
// the reasoning it spent to rep. An answer cut at its cap is an error,
// never text: a *ReasoningTruncatedError when reasoning took the whole
// cap and nothing was written, else a *TruncatedError; each is counted.
func (c *Caller) read(req *request, res *openai.ChatCompletion, rep *Report) (string, error) {
	if len(res.Choices) == 0 {
		return "", fmt.Errorf("llm: the %s answer has no choices", req.t.Name)
	}
	choice := res.Choices[0]
	reasoning := res.Usage.CompletionTokensDetails.ReasoningTokens
	rep.ReasoningTokens += reasoning
	switch {
	case choice.FinishReason == "length" && choice.Message.Content == "" && reasoning > 0:
		dep := rep.Deployment
		c.count(req.t.Name, func(s *TypeStats) {
			s.ReasoningTruncated++
			if s.ReasoningTruncatedBy == nil {
				s.ReasoningTruncatedBy = map[string]int64{}
			}
			s.ReasoningTruncatedBy[dep]++
		})
		return "", &ReasoningTruncatedError{Type: req.t.Name, Deployment: dep, MaxTokens: req.cap, Reasoning: reasoning, Effort: req.shape.effort(req.t)}
	case choice.FinishReason == "length":
		c.count(req.t.Name, func(s *TypeStats) { s.Truncated++ })
		return "", &TruncatedError{Type: req.t.Name, MaxTokens: req.cap}
	}
	return choice.Message.Content, nil
}
