//go:build !nosim

package agent

import (
	"context"

	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// openDefault opens the embedded default: the Azure OpenAI simulator in
// this process, answered by the word-matching stand-in for a model, on the
// in-memory budget. A binary built with -tags nosim leaves it out, and
// links neither the simulator nor the stand-in.
func openDefault(ctx context.Context, o llm.Options) (*llm.Caller, error) {
	return embedded.Open(ctx, o)
}
