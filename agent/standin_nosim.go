//go:build nosim

package agent

import (
	"context"
	"errors"

	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm"
)

// openDefault has no embedded default to open in a binary built with
// -tags nosim: a task needs a config, or a cassette to replay.
func openDefault(ctx context.Context, o llm.Options) (*llm.Caller, error) {
	if o.Replay != "" {
		return llm.Open(ctx, &config.File{}, o)
	}
	return nil, errors.New("no config, and this binary was built without the embedded default (-tags nosim): pass TaskOptions.Config")
}
