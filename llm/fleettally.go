package llm

import (
	"context"
	"sync"

	"github.com/headroom-agent/headroom/budget"
)

// fleetTally tells the fleet's census what this caller's totals rose by
// since it last told: its call types', its router's, the runs it ended.
// A container lives minutes; told every check-in and at Close, its calls
// stay in the fleet's totals after it is gone.
type fleetTally struct {
	mu   sync.Mutex
	told budget.Tally // the totals the census has taken
	runs map[string]int64
}

// run counts one run ended with status.
func (f *fleetTally) run(status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string]int64{}
	}
	f.runs[status]++
}

// Runs is the runs ended, by status (see CountRun).
func (c *Caller) Runs() map[string]int64 {
	c.fleet.mu.Lock()
	defer c.fleet.mu.Unlock()
	out := make(map[string]int64, len(c.fleet.runs))
	for s, n := range c.fleet.runs {
		out[s] = n
	}
	return out
}

// CountRun counts one agent run that ended with status (success,
// failed, error, ...), so the tokens a task costs can be read over the
// fleet's runs as well as its calls.
func (c *Caller) CountRun(status string) {
	if status != "" {
		c.fleet.run(status)
	}
}

// Tally is the caller's totals as the fleet's census adds them: its call
// types', its runs, and its router's (budget.Router.Tally).
func (c *Caller) Tally() budget.Tally {
	t := budget.Tally{}
	put := func(k budget.TallyKey, n int64) {
		if n > 0 {
			t[k] += n
		}
	}
	for name, s := range c.Stats() {
		k := func(counter string) budget.TallyKey { return budget.TallyKey{Counter: counter, Type: name} }
		put(k(budget.TallyCalls), s.Calls)
		put(k(budget.TallyReserved), s.TokensReserved)
		put(k(budget.TallyUsed), s.TokensUsed)
		put(budget.TallyKey{Counter: budget.TallyRefused, Type: name, Label: "mended"}, s.Mended)
		put(budget.TallyKey{Counter: budget.TallyRefused, Type: name, Label: "repaired"}, s.Repaired)
		put(budget.TallyKey{Counter: budget.TallyRefused, Type: name, Label: "invalid"}, s.Invalid)
		put(k(budget.TallyImages), s.Images)
		put(k(budget.TallyImageTokens), s.ImageTokens)
		put(k(budget.TallyTierFallbacks), s.TierFallbacks)
		for d, n := range s.PromptTokensBy {
			put(budget.TallyKey{Counter: budget.TallyPrompt, Type: name, Deployment: d}, n)
			put(budget.TallyKey{Counter: budget.TallyCached, Type: name, Deployment: d}, s.CachedTokensBy[d])
		}
	}
	for status, n := range c.Runs() {
		put(budget.TallyKey{Counter: budget.TallyRuns, Label: status}, n)
	}
	if c.Dispatcher != nil {
		t.Add(c.Dispatcher.Router().Tally())
	}
	return t
}

// tell adds what rose since the last tell to the census; what it does
// not take is told with the next. A tell whose answer was lost after the
// store took it is told again, and counted twice, as the census's other
// counts may be.
func (f *fleetTally) tell(ctx context.Context, census budget.Census, now budget.Tally) {
	f.mu.Lock()
	told := f.told
	f.mu.Unlock()
	rose := now.Since(told)
	if len(rose) == 0 {
		return
	}
	if census.AddTally(ctx, rose) == nil {
		f.mu.Lock()
		f.told = now
		f.mu.Unlock()
	}
}
