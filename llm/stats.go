package llm

import "maps"

// TypeStats counts what happened to one type's calls.
type TypeStats struct {
	Calls     int64 `json:"calls"`
	Truncated int64 `json:"truncated"` // answers cut at the cap: the cap is too tight
	// ReasoningTruncated counts the calls whose cap went to reasoning with
	// no answer written (a reasoning model), apart from Truncated; by
	// deployment in ReasoningTruncatedBy.
	ReasoningTruncated   int64            `json:"reasoning_truncated,omitempty"`
	ReasoningTruncatedBy map[string]int64 `json:"reasoning_truncated_by,omitempty"`
	// Fallback counts the calls the fallback pool served: Warm of them by
	// the share sent there on purpose, the rest because the primary pool
	// could not serve them in time. FallbackMended, FallbackRepaired and
	// FallbackInvalid are the mends, repairs and failures among them, so
	// a schema the fallback model handles worse shows as a count, not as
	// drift.
	Fallback         int64 `json:"fallback,omitempty"`
	FallbackWarm     int64 `json:"fallback_warm,omitempty"`
	FallbackMended   int64 `json:"fallback_mended,omitempty"`
	FallbackRepaired int64 `json:"fallback_repaired,omitempty"`
	FallbackInvalid  int64 `json:"fallback_invalid,omitempty"`
	// Mended counts the answers the parser refused for a slip the type
	// mended (calltypes.Type.Mend): read with no repair request sent.
	Mended   int64 `json:"mended"`
	Repaired int64 `json:"repaired"` // invalid answers fixed by one repair request
	Invalid  int64 `json:"invalid"`  // answers still invalid after it
	// TokensReserved is what the type's calls charged the budget, and
	// TokensUsed what they used: their ratio is the reservation error, the
	// throughput an oversized cap throws away.
	TokensReserved int64 `json:"tokens_reserved"`
	TokensUsed     int64 `json:"tokens_used"`
	// PromptTokens is what the deployments counted of the calls' prompts,
	// and CachedTokens the part they read from their prompt caches.
	// By deployment in PromptTokensBy and CachedTokensBy: a cache is a
	// deployment's, so its share is read per deployment.
	PromptTokens   int64            `json:"prompt_tokens,omitempty"`
	CachedTokens   int64            `json:"cached_tokens,omitempty"`
	PromptTokensBy map[string]int64 `json:"prompt_tokens_by,omitempty"`
	CachedTokensBy map[string]int64 `json:"cached_tokens_by,omitempty"`
	// Images and ImageTokens are the screenshots the calls carried and
	// what they were priced at.
	Images      int64 `json:"images,omitempty"`
	ImageTokens int64 `json:"image_tokens,omitempty"`
	// TierFallbacks counts the calls whose service tier the deployment
	// refused, sent once more on the default tier.
	TierFallbacks int64 `json:"tier_fallbacks,omitempty"`
}

// Stats returns a copy of the per-type counters.
func (c *Caller) Stats() map[string]TypeStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]TypeStats, len(c.stats))
	for k, v := range c.stats {
		x := *v
		x.ReasoningTruncatedBy = maps.Clone(v.ReasoningTruncatedBy)
		x.PromptTokensBy = maps.Clone(v.PromptTokensBy)
		x.CachedTokensBy = maps.Clone(v.CachedTokensBy)
		out[k] = x
	}
	return out
}

func (c *Caller) count(typ string, f func(*TypeStats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stats == nil {
		c.stats = map[string]*TypeStats{}
	}
	if c.stats[typ] == nil {
		c.stats[typ] = &TypeStats{}
	}
	f(c.stats[typ])
}

// settle adds what a call charged and used, over all its requests, to its
// type's counters, and its prompt to what the census is told.
func (c *Caller) settle(rep Report) {
	c.prompts.add(rep.Deployment, rep.PromptTokens, rep.CachedTokens)
	c.count(rep.Type, func(s *TypeStats) {
		s.TokensReserved += rep.TokensReserved
		s.TokensUsed += rep.TokensUsed
		s.PromptTokens += rep.PromptTokens
		s.CachedTokens += rep.CachedTokens
		if rep.Deployment != "" && rep.PromptTokens > 0 {
			s.PromptTokensBy = addTo(s.PromptTokensBy, rep.Deployment, rep.PromptTokens)
			s.CachedTokensBy = addTo(s.CachedTokensBy, rep.Deployment, rep.CachedTokens)
		}
		s.Images += int64(rep.Images)
		s.ImageTokens += rep.ImageTokens
	})
}

// addTo adds n to m[key], making m when it is nil.
func addTo(m map[string]int64, key string, n int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[key] += n
	return m
}
