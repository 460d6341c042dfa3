package agent

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
)

// LearnedKeyEnv names the variable whose value signs learned entries: a
// fleet whose Redis others can write to sets it, and every agent then
// refuses an entry it did not sign (docs/learned.md).
const LearnedKeyEnv = "HEADROOM_LEARNED_KEY"

// OpenLearned opens where learned runs live: spec when given (run's
// --learned), else the config's learned:, else none (nil, nil): learning
// is off unless asked for. "redis" is the budget's Redis, under keys of
// its own.
func OpenLearned(ctx context.Context, spec string, cfg *config.File) (*learned.Library, error) {
	if spec == "" && cfg != nil {
		spec = cfg.Learned
	}
	if spec == "redis" {
		if cfg == nil {
			return nil, Usage(errors.New("learned store redis is the budget's Redis, and no config names one: give redis://HOST:PORT, or a config that names its redis"))
		}
		u, err := cfg.Budget.RedisURL()
		if err != nil || u == "" {
			return nil, Usage(fmt.Errorf("learned store redis is the budget's Redis, and the config names none: give redis://HOST:PORT"))
		}
		spec = u
	}
	d, err := learned.Open(ctx, spec)
	switch {
	case errors.Is(err, learned.ErrUnavailable):
		// As the budget's store: the fleet's, and down.
		return nil, fmt.Errorf("%w: %w", budget.ErrUnavailable, err)
	case err != nil:
		return nil, Usage(err)
	case d == nil:
		return nil, nil
	}
	var o learned.Options
	if k := os.Getenv(LearnedKeyEnv); k != "" {
		o.SignKey = []byte(k)
	}
	return learned.NewLibrary(d, o), nil
}
