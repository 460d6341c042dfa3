// Package metrics exports the budget's dashboard: per deployment, never
// only summed. Two sinks read one Source: CloudWatch Embedded Metric
// Format lines (EMF), which the awslogs driver turns into metrics with no
// agent, and a Prometheus collector for a /metrics endpoint.
package metrics

import (
	"context"
	"sort"

	"github.com/headroom-agent/headroom/budget"
)

// Type is one call type's counters in this process.
type Type struct {
	Name           string
	Calls          int64
	TokensReserved int64
	TokensUsed     int64
	// Mended, Repaired and Invalid count the answers the parser refused:
	// read once the type mended a slip, read after a repair request, and
	// still refused after it. A rise says the prompt or the model drifted.
	Mended, Repaired, Invalid int64
	// PromptTokens and CachedTokens are what each deployment counted of
	// the type's prompts and read from its prompt cache, by deployment.
	PromptTokens, CachedTokens map[string]int64
	// Images and ImageTokens are the screenshots the calls carried and
	// what they were priced at; TierFallbacks the calls sent again on the
	// default tier when a deployment refused the type's.
	Images, ImageTokens, TierFallbacks int64
}

// CachedShare is the share of the type's prompt tokens that deployment
// read from its cache; 0 before any were counted.
func (t Type) CachedShare(deployment string) float64 {
	if t.PromptTokens[deployment] == 0 {
		return 0
	}
	return float64(t.CachedTokens[deployment]) / float64(t.PromptTokens[deployment])
}

// ReservationError is what the type's calls charged over what they used:
// 4 means three quarters of the throughput went to an oversized cap. 0
// when nothing was used yet.
func (t Type) ReservationError() float64 {
	if t.TokensUsed == 0 {
		return 0
	}
	return float64(t.TokensReserved) / float64(t.TokensUsed)
}

// Learned is one task's learned runs in this process: runs replayed to a
// verified end, runs that missed (by reason: none learned, an element not
// found, an outcome of another kind, ...), and entries healed by a run the
// model finished.
type Learned struct {
	Task   string
	Hits   int64
	Heals  int64
	Misses map[string]int64
}

// View is what the sinks export at one instant.
type View struct {
	budget.Dashboard
	Types   []Type
	Learned []Learned
	// Runs is the agent runs ended, by status (success, failed, error,
	// ...): over them, the tokens a task costs.
	Runs map[string]int64
}

// A Source reads the view: the router's dashboard (from the store) and
// the process's call types.
type Source func(ctx context.Context) (View, error)

// causes are the 429 causes every export names, zero or not, so a panel
// of four lines never loses one.
var causes = []budget.Cause{budget.CauseTokens, budget.CauseRequests, budget.CauseAdjustment, budget.CauseUnknown}

// writes are the writes after a call, each reported even at zero.
var writes = []string{budget.WriteSettle, budget.WriteCancel, budget.WriteBreaker, budget.WriteLimit, budget.WriteAbsorb, budget.WriteCensus}

// classes are the priority classes, named as task files write them.
var classes = []struct {
	c    budget.Class
	name string
}{{budget.Interactive, "interactive"}, {budget.Background, "background"}}

func sortTypes(ts []Type) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}

func sortStrings(s []string) { sort.Strings(s) }
