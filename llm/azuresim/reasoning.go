package azuresim

import (
	"fmt"
	"net/http"
	"strings"
)

// The simulator's own knowledge of the reasoning families, kept apart from
// the client's family table (budget/models) as the quota table is: what
// Azure does, not what the client believes it does.

// reasoningPrefixes are the model name prefixes of the reasoning families.
// gpt-5-chat is the gpt-5 family's chat model.
var reasoningPrefixes = []string{"o1", "o3", "o4", "gpt-5"}

// isReasoning reports whether model is a reasoning model.
func isReasoning(model string) bool {
	m := strings.ToLower(model)
	if strings.HasPrefix(m, "gpt-5-chat") {
		return false
	}
	for _, p := range reasoningPrefixes {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// efforts are the reasoning_effort values a reasoning model accepts.
func efforts(model string) []string {
	if strings.HasPrefix(strings.ToLower(model), "gpt-5") {
		return []string{"minimal", "low", "medium", "high"}
	}
	return []string{"low", "medium", "high"}
}

// defaultReasoning is how many reasoning tokens a call spends at each
// effort, when its deployment sets no reasoning_tokens of its own; medium
// is the default effort.
var defaultReasoning = map[string]int64{"minimal": 16, "low": 160, "medium": 640, "high": 2560}

// DefaultReasoning is how many reasoning tokens a call at effort spends
// when its deployment sets none; false for an unknown effort.
func DefaultReasoning(effort string) (int64, bool) {
	n, ok := defaultReasoning[effort]
	return n, ok
}

// reasoningTokens is what a call on d at effort spends thinking.
func (d *deployment) reasoningTokens(effort string) int64 {
	if effort == "" {
		effort = "medium"
	}
	if n, ok := d.cfg.ReasoningTokens[effort]; ok {
		return n
	}
	return defaultReasoning[effort]
}

// checkReasoning answers 400 as Azure does to a request shaped for a chat
// model on a reasoning deployment, and the other way round.
func (c *call) checkReasoning(w http.ResponseWriter, body chatRequest) bool {
	model := c.d.cfg.Model
	if !isReasoning(model) {
		if body.ReasoningEffort != nil {
			badRequestCode(w, "reasoning_effort", "unsupported_parameter",
				"Unrecognized request argument supplied: reasoning_effort")
			return false
		}
		return true
	}
	if body.MaxTokens != nil {
		badRequestCode(w, "max_tokens", "unsupported_parameter",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
		return false
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"temperature", body.Temperature}, {"top_p", body.TopP}} {
		if p.v != nil && *p.v != 1 {
			badRequestCode(w, p.name, "unsupported_value",
				fmt.Sprintf("Unsupported value: '%s' does not support %v with this model. Only the default (1) value is supported.", p.name, *p.v))
			return false
		}
	}
	if e := body.ReasoningEffort; e != nil {
		ok := false
		for _, x := range efforts(model) {
			ok = ok || *e == x
		}
		if !ok {
			badRequestCode(w, "reasoning_effort", "unsupported_value",
				fmt.Sprintf("Unsupported value: 'reasoning_effort' does not support '%s' with this model. Supported values are: %s.", *e, quoteList(efforts(model))))
			return false
		}
	}
	return true
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}

func badRequestCode(w http.ResponseWriter, param, code, msg string) {
	writeJSON(w, http.StatusBadRequest, azureError{errorBody{
		Code: code, Type: "invalid_request_error", Param: param, Message: msg,
	}})
}
