package azuresim

import (
	"encoding/json"
	"strings"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// A Model writes the assistant's reply to a call. The simulator cuts the
// reply at the call's token cap and reports finish_reason "length" when it
// does, so a Model never has to know about limits.
type Model interface {
	Reply(Request) string
}

// Request is what a Model sees of a call.
type Request struct {
	Deployment string
	// Messages hold the text of the call's messages; a Model reads no
	// images, only how many came.
	Messages []tokens.Message
	Images   int
	// ResponseFormat is the call's response_format, raw, when it set one.
	ResponseFormat json.RawMessage
	// MaxTokens is the call's cap (the deployment default when it set none).
	MaxTokens int64
	// OutputTokens is the deployment's configured answer length.
	OutputTokens int
}

// Echo answers with the last user message.
type Echo struct{}

func (Echo) Reply(r Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Fixed answers with exactly OutputTokens tokens of filler text (16 when the
// deployment sets none), so tests and load runs control answer length.
type Fixed struct{}

// words are common words that are one o200k token each, with or without a
// leading space, so n of them make an n-token answer.
var words = strings.Fields("the quick brown fox jumps over the lazy dog while every budget keeps count of each token it is given")

func (Fixed) Reply(r Request) string {
	n := r.OutputTokens
	if n <= 0 {
		n = 16
	}
	out := make([]string, n)
	for i := range out {
		out[i] = words[i%len(words)]
	}
	text := strings.Join(out, " ")
	if tokens.Count(text) != n {
		// Not reached with the words above; keeps the promise if they change.
		return strings.TrimSpace(strings.Repeat("token ", n))
	}
	return text
}
