package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A Tally is running totals a process adds to the fleet's in the census:
// its calls by type, tokens, refused answers, 429s, sheds. An agent's own
// counters die with its container, minutes after it starts; the fleet's
// are one set of totals a long-lived reader (headroom budget exporter)
// serves, so a Prometheus that scrapes every 30 s sees a fleet of 400 as
// counters that only rise, not as a flicker of short series.
type Tally map[TallyKey]int64

// A TallyKey names one total: what it counts and what it is counted by.
// Fields a counter is not counted by are empty.
type TallyKey struct {
	Counter    string
	Type       string // the call type
	Deployment string // the deployment's name
	Label      string // a cause, a priority class, an outcome, an operation, a status
}

// The counters a Tally holds, and what each is counted by.
const (
	TallyCalls         = "calls"           // by Type
	TallyReserved      = "tokens_reserved" // by Type
	TallyUsed          = "tokens_used"     // by Type
	TallyRefused       = "answers_refused" // by Type, Label mended|repaired|invalid
	TallyPrompt        = "prompt_tokens"   // by Type and Deployment
	TallyCached        = "cached_tokens"   // by Type and Deployment
	TallyImages        = "images"          // by Type
	TallyImageTokens   = "image_tokens"    // by Type
	TallyTierFallbacks = "tier_fallbacks"  // by Type
	TallyAnswered      = "answered"        // by Deployment
	TallyRateLimited   = "rate_limited"    // by Deployment, Label the Cause
	TallyWritesFailed  = "writes_failed"   // by Deployment, Label the write
	TallyShed          = "shed"            // by Label, the priority class's name
	TallyStoreCalls    = "store_calls"     // by Label, the store operation
	TallyStoreAgain    = "store_again"     // by Label
	TallyStoreDown     = "store_down"      // by Label
	TallyRuns          = "runs"            // by Label, the run's status
)

// TallyKept is how long the census keeps the fleet's totals after the
// last added: a week, so "day over day" compares days of one series, and
// a fleet idle over a weekend does not read as counters that reset.
const TallyKept = 7 * 24 * time.Hour

// Add adds u's totals to t's.
func (t Tally) Add(u Tally) {
	for k, n := range u {
		t[k] += n
	}
}

// Since is what t counted after then: each total less then's, the ones
// that rose only. A process tells the census what rose since it last
// told, so a tell lost is told again with the next.
func (t Tally) Since(then Tally) Tally {
	out := Tally{}
	for k, n := range t {
		if d := n - then[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// tallySep joins a key's fields into one, where a store keeps them as
// one field name; no name a config or a registry accepts holds it.
const tallySep = "\x1f"

// Field is k as one string, for a store that keeps the totals as a hash.
func (k TallyKey) Field() string {
	return strings.Join([]string{k.Counter, k.Type, k.Deployment, k.Label}, tallySep)
}

// ParseTallyField reads a key back from Field's form.
func ParseTallyField(f string) (TallyKey, error) {
	p := strings.Split(f, tallySep)
	if len(p) != 4 || p[0] == "" {
		return TallyKey{}, fmt.Errorf("budget: tally field %q is not a counter and three labels", f)
	}
	return TallyKey{Counter: p[0], Type: p[1], Deployment: p[2], Label: p[3]}, nil
}

// Check says what is wrong with a tally a driver is asked to add: a
// total that is not above zero, a key with no counter, or a field that
// holds the separator its store form needs.
func (t Tally) Check() error {
	for k, n := range t {
		if k.Counter == "" {
			return fmt.Errorf("budget: a tally total with no counter (%+v)", k)
		}
		for _, s := range []string{k.Counter, k.Type, k.Deployment, k.Label} {
			if strings.Contains(s, tallySep) {
				return fmt.Errorf("budget: tally key %q holds a unit separator", s)
			}
		}
		if n <= 0 {
			return fmt.Errorf("budget: tally %s (%s %s %s) adds %d; totals only rise", k.Counter, k.Type, k.Deployment, k.Label, n)
		}
	}
	return nil
}

// Tally is this router's own totals as the fleet's census adds them up:
// calls answered and 429s by deployment, writes after a call the store
// did not take, calls shed by class, store round trips by operation. A
// Caller adds its call types' and tells the sum at each check-in.
func (r *Router) Tally() Tally {
	t := Tally{}
	put := func(k TallyKey, n int64) {
		if n > 0 {
			t[k] += n
		}
	}
	m := r.Metrics()
	for d, n := range m.ByDeployment {
		put(TallyKey{Counter: TallyAnswered, Deployment: d}, n)
	}
	for d, by := range m.RateLimitedBy {
		for cause, n := range by {
			put(TallyKey{Counter: TallyRateLimited, Deployment: d, Label: string(cause)}, n)
		}
	}
	for d, by := range m.StoreWritesFailed {
		for w, n := range by {
			put(TallyKey{Counter: TallyWritesFailed, Deployment: d, Label: w}, n)
		}
	}
	for c, n := range m.ShedBy {
		put(TallyKey{Counter: TallyShed, Label: c.String()}, n)
	}
	if r.store != nil {
		for op, st := range r.store.Stats() {
			put(TallyKey{Counter: TallyStoreCalls, Label: op}, st.Calls)
			put(TallyKey{Counter: TallyStoreAgain, Label: op}, st.AskedAgain)
			put(TallyKey{Counter: TallyStoreDown, Label: op}, st.Unavailable)
		}
	}
	return t
}

// FleetTally reads the fleet's totals from the store's census: what
// every process told of its own (Router.Tally and its call types') over
// the last TallyKept. ErrNoCensus when the store keeps none.
func (r *Router) FleetTally(ctx context.Context) (Tally, error) {
	if err := r.made(); err != nil {
		return nil, err
	}
	c, ok := r.store.Census()
	if !ok {
		return nil, ErrNoCensus
	}
	return c.ReadTally(ctx)
}

// ErrNoCensus is a store that keeps no census: nothing the fleet told
// can be read from it.
var ErrNoCensus = errors.New("budget: the store keeps no census")
