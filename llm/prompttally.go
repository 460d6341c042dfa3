package llm

import (
	"context"
	"sync"

	"github.com/headroom-agent/headroom/budget"
)

// promptTally holds the prompt tokens this process's calls were counted,
// and the part read from a cache, by deployment, until they are told to
// the fleet's census: every check-in, not every call, so the cache's
// share costs the call's path no round trip.
type promptTally struct {
	mu      sync.Mutex
	pending map[string]budget.PromptTokens // by deployment name
}

func (p *promptTally) add(deployment string, prompt, cached int64) {
	if deployment == "" || prompt <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string]budget.PromptTokens{}
	}
	n := p.pending[deployment]
	p.pending[deployment] = budget.PromptTokens{Prompt: n.Prompt + prompt, Cached: n.Cached + min(cached, prompt)}
}

// tell hands what is pending to the census, each deployment under its
// quota's key as the census counts it; what the census did not take stays
// pending for the next time.
func (p *promptTally) tell(ctx context.Context, census budget.Census, quota map[string]string) {
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	for d, n := range pending {
		key := quota[d]
		if key == "" {
			key = d
		}
		if err := census.CountPrompt(ctx, key, n.Prompt, n.Cached); err != nil {
			p.add(d, n.Prompt, n.Cached)
		}
	}
}
