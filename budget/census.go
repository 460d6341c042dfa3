package budget

import (
	"context"
	"time"
)

// A Census counts the fleet in the shared store, beside the budget: which
// agents are alive, and the 429s each deployment sent, by cause. Every
// container's metrics are its own; the census is what lets one process (a
// scrape, budget top) show the whole fleet. Stores that can implement it;
// both drivers do.
type Census interface {
	// Checkin marks an agent (a Caller) alive for ttl from the store's
	// clock; Checkout forgets it at once.
	Checkin(ctx context.Context, agent string, ttl time.Duration) error
	Checkout(ctx context.Context, agent string) error
	// Count429 counts one 429 a deployment sent, in the store's current
	// token window.
	Count429(ctx context.Context, deployment string, cause Cause) error
	// CountLostWrites adds n writes after a call (a settle, a cancel, a
	// breaker opened) that a process could not make on a deployment, told
	// once the store answers it again. The count is kept LostWritesKept
	// after the last one told.
	CountLostWrites(ctx context.Context, deployment string, n int64) error
	// CountPrompt adds prompt tokens a deployment counted and the part of
	// them it read from its prompt cache, as the fleet's processes tell
	// them every few seconds. The sums are kept PromptKept after the last
	// added.
	CountPrompt(ctx context.Context, deployment string, prompt, cached int64) error
	// AddTally adds a process's totals to the fleet's (see Tally.Check
	// for what it refuses); every total is kept TallyKept after the last
	// added. ReadTally reads the fleet's totals, every key ever added and
	// not yet expired.
	AddTally(ctx context.Context, t Tally) error
	ReadTally(ctx context.Context) (Tally, error)
	// Count reads the agents alive and, per deployment, the 429s of the
	// current and the previous window (so "in the last minute" never reads
	// a window just begun as quiet).
	Count(ctx context.Context, deployments ...string) (Count, error)
}

// Count is what the census holds now.
type Count struct {
	Agents int
	// RateLimited is by deployment, then cause.
	RateLimited map[string]map[Cause]int64
	// LostWrites is by deployment: the writes the fleet's processes could
	// not make, as they told them (see CountLostWrites).
	LostWrites map[string]int64
	// Prompt is by deployment: the prompt tokens the fleet's calls were
	// counted and the part read from a cache (see CountPrompt).
	Prompt map[string]PromptTokens
}

// PromptTokens are prompt tokens a deployment counted, and the part of
// them it read from its prompt cache.
type PromptTokens struct{ Prompt, Cached int64 }

// CachedShare is the part of the prompt tokens read from a cache; 0 with
// none counted.
func (p PromptTokens) CachedShare() float64 {
	if p.Prompt <= 0 {
		return 0
	}
	return float64(p.Cached) / float64(p.Prompt)
}

// PromptKept is how long the census keeps a deployment's prompt sums
// after the last told: an hour of a fleet's calls, so a share read now
// is of the calls a cache could still be warm for, and a fleet that
// stopped an hour ago reads as none.
const PromptKept = time.Hour

// LostWritesKept is how long the census keeps a deployment's count of lost
// writes after the last one told: long enough for whoever looks the next
// day to see that an outage cost some.
const LostWritesKept = 24 * time.Hour

// checkinEvery is how often a Caller tells the census it is alive;
// checkinTTL how long one check-in lasts, so a container that dies drops
// out within it.
const (
	CheckinEvery = 5 * time.Second
	CheckinTTL   = 3 * CheckinEvery
)
