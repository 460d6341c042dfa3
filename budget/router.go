package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

// Class is a call's priority.
type Class int

const (
	// Interactive calls may use a deployment's whole allowance.
	Interactive Class = iota
	// Background calls leave the configured floor of every deployment to
	// interactive ones.
	Background
)

func (c Class) String() string {
	if c == Background {
		return "background"
	}
	return "interactive"
}

// Call is what the router needs to place one model call.
type Call struct {
	// Tokens is the call's pessimistic cost: its prompt estimate plus its
	// answer cap times n.
	Tokens int64
	Class  Class
	// Pool is the routing pool; "" is "default".
	Pool string
	// Session, when set, prefers the deployment that served the session
	// last (its prompt cache is warm) while that one has headroom.
	Session string
	// Resource, when set, pins the call to the Azure resource that minted
	// the stored items it refers to (previous_response_id): no other
	// resource can serve it.
	Resource string
}

var (
	// ErrShed means the call could not get budget before its deadline:
	// the queue shed it rather than send a call that would be refused.
	ErrShed = errors.New("budget: shed: no deployment has room before the call's deadline")
	// ErrTooLarge means the call costs more than any deployment allows in
	// a window: lower its max_tokens.
	ErrTooLarge = errors.New("budget: the call costs more tokens than any deployment allows in one window")
	// ErrPinned means no deployment of the pool is on the resource the
	// call is pinned to.
	ErrPinned = errors.New("budget: no deployment on the resource that holds the call's stored items")
)

// RouterOptions tune a Router; the zero value works.
type RouterOptions struct {
	// Fixed keeps the model as configured: the config's margin, and
	// admissions spaced at the request rate stretched by RequestSlack and
	// RequestJitter. Otherwise (the default, on a store that is a
	// Calibrator) the margin and the pacing allowance are learned from
	// Azure's headers and shared through the store; see learning.Calibration.
	Fixed bool
	// learning.Calibration tunes the learning; the zero value works.
	Calibration learning.Policy
	// RequestSlack (default 0.01) stretches the spacing between
	// admissions on a deployment beyond its request rate. RequestJitter
	// (default 5ms) is the fixed model's allowance for the variation in
	// time from reserving a call to its arrival at the server, added to
	// every interval; a negative one means none. The learned model
	// measures that variation instead.
	RequestSlack  float64
	RequestJitter time.Duration
	// ExtraWaits is how many more attempts a call may make, waiting for a
	// deployment it already tried, once every deployment of its pool has
	// failed it: waiting out a Retry-After is cheaper than failing the
	// work. nil means DefaultExtraWaits; new(0) none.
	ExtraWaits *int
	// Rand picks between the best two; default a random source.
	Rand *rand.Rand
}

// DefaultExtraWaits is RouterOptions.ExtraWaits when it is nil.
const DefaultExtraWaits = 2

// Router places calls on the deployment with the most headroom left.
type Router struct {
	store   *Store
	cfg     *Config
	pools   map[string][]*route
	opts    RouterOptions
	metrics *counters

	mu       sync.Mutex // guards rng and sessions
	rng      *rand.Rand
	sessions map[string]*route
	queues   map[string]*[2]queue // by pool, then class

	lost lostWrites // Done's, until the census is told
}

// route is one deployment as the router sees it.
type route struct {
	d          *Deployment
	lim        Limits // interactive, as configured
	background Limits // with the interactive floor kept back
	br         *breaker
	learn      learner
}

// NewRouter routes over cfg's deployments, counting in store. cfg must have
// been validated.
func NewRouter(store *Store, cfg *Config, opts RouterOptions) (*Router, error) {
	if store == nil || cfg == nil || len(cfg.Deployments) == 0 || cfg.InteractiveFloor == nil || cfg.AffinityThreshold == nil {
		return nil, errors.New("budget: a router needs a store and a validated config with deployments (call Validate)")
	}
	if opts.RequestSlack == 0 {
		opts.RequestSlack = 0.01
	}
	switch {
	case opts.RequestJitter == 0:
		opts.RequestJitter = 5 * time.Millisecond
	case opts.RequestJitter < 0:
		opts.RequestJitter = 0
	}
	if !cfg.Calibration.Learns() {
		opts.Fixed = true
	}
	if opts.ExtraWaits == nil {
		opts.ExtraWaits = new(DefaultExtraWaits)
	}
	if *opts.ExtraWaits < 0 {
		return nil, fmt.Errorf("budget: RouterOptions.ExtraWaits is %d: use 0 or more (nil for the default, %d)", *opts.ExtraWaits, DefaultExtraWaits)
	}
	r := &Router{store: store, cfg: cfg, opts: opts, pools: map[string][]*route{}, metrics: newMetrics(),
		sessions: map[string]*route{}, queues: map[string]*[2]queue{}}
	r.rng = opts.Rand
	if r.rng == nil {
		r.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	for name, ds := range cfg.Pools() {
		for _, d := range ds {
			lim := d.Limits(cfg.Margin)
			lim.Spacing = lim.requestSpacing(store.Window(), opts.RequestSlack, opts.RequestJitter)
			bg := lim
			bg.Margin = cmp.Or(cfg.Margin, DefaultMargin) * (1 - *cfg.InteractiveFloor)
			r.pools[name] = append(r.pools[name], &route{d: d, lim: lim, background: bg, br: &breaker{}})
		}
		r.queues[name] = &[2]queue{}
	}
	return r, nil
}

// limits are the limits a call of class c is admitted under: as
// configured for the fixed model, or with the learned margin and pacing.
func (r *Router) limits(rt *route, c Class) Limits {
	lim := rt.lim
	if c == Background {
		lim = rt.background
	}
	if _, ok := r.calibrator(); !ok {
		return lim
	}
	p := r.policy()
	cal := rt.calibration()
	lim.Margin = min(MaxMargin, cal.Margin(p))
	if c == Background {
		lim.Margin *= 1 - *r.cfg.InteractiveFloor
	}
	lim.Spacing = lim.pacedSpacing(r.store.Window(), r.opts.RequestSlack, cal.Allowance(p))
	lim.Sliding = cal.Sliding
	return lim
}

// headroom is the fraction of a deployment's allowance still free this
// window: tokens against limit × margin, bounded by both request windows.
// Routing on the fraction, not on absolute use, is what keeps a small
// deployment from being chosen just because little has been spent on it.
func headroom(u Usage, lim Limits) float64 {
	capTokens := lim.TokenCap(u.EffectiveLimit)
	if capTokens <= 0 {
		return 0
	}
	held := u.Reserved
	if lim.Sliding {
		held += u.Carried
	}
	f := float64(capTokens-held) / float64(capTokens)
	f = min(f, float64(lim.PerSecond()-u.Requests1s)/float64(lim.PerSecond()))
	f = min(f, float64(lim.PerTenSeconds()-u.Requests10s)/float64(lim.PerTenSeconds()))
	return max(0, f)
}

// Lease is a reservation on the deployment chosen for a call. End it with
// Done, whatever happened.
type Lease struct {
	Deployment  *Deployment
	Reservation Reservation
	// Headroom is the deployment's headroom fraction when it was chosen.
	Headroom float64

	router *Router
	route  *route
	call   Call
	seen   Usage // the deployment's state when it was chosen
	probe  bool  // this call is the breaker's half-open probe
	ended  bool
	cause  Cause   // a 429's, once Done read it
	failed []error // Done's writes the store did not take
	before int     // those of the earlier leases of the same Do call
	// admitted is when the reservation was asked for, on this process's
	// clock: the start of the lag the pacing allows for. The store admits
	// it somewhere in its round trip, which may queue behind others'.
	// sendBy is the latest the call may leave (see SendBy).
	admitted, sendBy time.Time
}

// reserve asks the store for c's reservation on rt.
func (r *Router) reserve(ctx context.Context, rt *route, c Call) (Reservation, error) {
	return r.store.Reserve(ctx, NewID(), rt.d.QuotaKey, Cost{Tokens: c.Tokens}, r.limits(rt, c.Class))
}

// SendBy is the latest the call may leave this process on this lease;
// zero when there is no such bound. Admissions are paced on the
// assumption that a call reaches the server within the measured lag of
// its admission; a call that would leave later (its process was not
// scheduled in time) should not be sent, checked before anything is
// written:
// report Outcome.Late, and Router.Do reserves it again, which also
// teaches the fleet the longer lag.
func (l *Lease) SendBy() time.Time { return l.sendBy }

// candidate is a route scored for one call.
type candidate struct {
	rt   *route
	u    Usage
	frac float64
}

// Acquire reserves c's cost on the deployment with the most headroom:
// it takes the best two by headroom fraction and picks one at random
// (never all on the same winner), tries the other and then the rest when
// refused, and when none admits waits until the earliest moment room
// frees, within ctx's deadline. A call that cannot be served before its
// deadline is shed (ErrShed). exclude names deployments not to use.
func (r *Router) Acquire(ctx context.Context, c Call, exclude ...string) (*Lease, error) {
	routes, err := r.candidates(c)
	if err != nil {
		return nil, err
	}
	r.metrics.add(func(m *MetricsSnapshot) { m.Calls++ })
	return r.acquire(ctx, c, routes, exclude)
}

// acquire is Acquire over routes, the call's candidates, without counting
// the call: Do counts it once, however many leases it takes.
func (r *Router) acquire(ctx context.Context, c Call, routes []*route, exclude []string) (*Lease, error) {
	leave, err := r.queues[cmp.Or(c.Pool, DefaultPool)][c.Class].enter(ctx)
	if err != nil {
		r.metrics.shed(c.Class)
		return nil, fmt.Errorf("%w: %w", ErrShed, err)
	}
	defer leave()
	for {
		r.refresh(ctx, routes)
		cands, err := r.score(ctx, c, routes, exclude)
		if err != nil {
			return nil, err
		}
		wait, tooLarge := time.Duration(-1), 0
		order, sticky := r.order(c, cands)
	try:
		for i, cd := range order {
			if !cd.rt.br.allow(time.Now()) {
				continue
			}
			asked := time.Now()
			res, err := r.reserve(ctx, cd.rt, c)
			var ref *Refusal
			switch {
			case err == nil:
				l := &Lease{Deployment: cd.rt.d, Reservation: res, Headroom: cd.frac, router: r, route: cd.rt, call: c, seen: cd.u, admitted: asked}
				if _, ok := r.calibrator(); ok {
					// Half the lag for this side: the other half, and what
					// 429s taught, for the way to the server.
					l.sendBy = asked.Add(cd.rt.calibration().LagInForce(r.policy()) / 2)
				}
				l.probe = cd.rt.br.startProbe()
				if c.Session != "" {
					r.remember(c.Session, cd.rt)
				}
				return l, nil
			case errors.As(err, &ref):
				if ref.TooLarge {
					tooLarge++
					continue
				}
				if wait < 0 || ref.Wait < wait {
					wait = ref.Wait
				}
				if i == 0 && sticky && ref.Wait <= affinityWait && (ref.Limit == LimitSpacing || ref.Limit == LimitRequests1s) {
					// The session's deployment is only pacing: a warm
					// prompt cache is worth a few milliseconds.
					break try
				}
			default:
				return nil, err
			}
		}
		if wait < 0 {
			if tooLarge > 0 {
				return nil, ErrTooLarge
			}
			// Every candidate is behind an open breaker: wait for the
			// earliest to close.
			wait = r.earliestClose(cands)
		}
		if dl, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(dl) {
			r.metrics.shed(c.Class)
			return nil, fmt.Errorf("%w (%s call, next room in %v)", ErrShed, c.Class, wait.Round(time.Millisecond))
		}
		r.metrics.add(func(m *MetricsSnapshot) { m.Waits++ })
		t := time.NewTimer(wait + r.jitter(wait))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			r.metrics.shed(c.Class)
			return nil, fmt.Errorf("%w: %w", ErrShed, ctx.Err())
		}
	}
}

// maxSessions bounds the affinity map: a process serves a few sessions at
// a time, and forgetting old ones costs a cold cache, nothing more.
const maxSessions = 10000

func (r *Router) remember(session string, rt *route) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sessions[session]; !ok && len(r.sessions) >= maxSessions {
		clear(r.sessions)
	}
	r.sessions[session] = rt
}

// errZeroRouter is what a Router that NewRouter did not make answers.
var errZeroRouter = errors.New("budget: this Router has no store and no deployments: make one with NewRouter(store, cfg, opts)")

// made reports a Router declared as a zero value, which has nothing to
// route over.
func (r *Router) made() error {
	if r == nil || r.store == nil || r.cfg == nil {
		return errZeroRouter
	}
	return nil
}

// candidates are the routes that may serve c.
func (r *Router) candidates(c Call) ([]*route, error) {
	if err := r.made(); err != nil {
		return nil, err
	}
	if c.Class != Interactive && c.Class != Background {
		return nil, fmt.Errorf("budget: unknown call class %d", c.Class)
	}
	pool := cmp.Or(c.Pool, DefaultPool)
	routes := r.pools[pool]
	if len(routes) == 0 {
		return nil, fmt.Errorf("budget: no routing pool %q in the config", pool)
	}
	if c.Resource == "" {
		return routes, nil
	}
	var pinned []*route
	for _, rt := range routes {
		if rt.d.Resource() == c.Resource {
			pinned = append(pinned, rt)
		}
	}
	if len(pinned) == 0 {
		return nil, fmt.Errorf("%w: %s is not in pool %q; the call refers to items stored there, and another resource would answer 400", ErrPinned, c.Resource, pool)
	}
	return pinned, nil
}

// score reads every candidate's usage in one round trip.
func (r *Router) score(ctx context.Context, c Call, routes []*route, exclude []string) ([]candidate, error) {
	var keys []string
	for _, rt := range routes {
		if !slices.Contains(keys, rt.d.QuotaKey) {
			keys = append(keys, rt.d.QuotaKey)
		}
	}
	us, err := r.store.Usage(ctx, keys...)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]Usage, len(us))
	for _, u := range us {
		byKey[u.Deployment] = u
	}
	cands := make([]candidate, 0, len(routes))
	for _, rt := range routes {
		if slices.Contains(exclude, rt.d.Name) {
			continue
		}
		u := byKey[rt.d.QuotaKey]
		f := headroom(u, r.limits(rt, c.Class))
		if u.OpenUntil.After(u.Now) {
			f = -1 // open elsewhere in the fleet: last resort only
		}
		cands = append(cands, candidate{rt: rt, u: u, frac: f})
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("budget: every deployment of pool %q failed this call", cmp.Or(c.Pool, DefaultPool))
	}
	return cands, nil
}

// affinityWait is how long a call waits for its session's deployment to
// admit it when that deployment is only pacing requests.
const affinityWait = 250 * time.Millisecond

// order is the sequence in which to try candidates: the session's last
// deployment while it has headroom (sticky), then one of the best two at
// random (weighted), the other, and the rest by headroom.
func (r *Router) order(c Call, cands []candidate) (_ []candidate, sticky bool) {
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if x := cmp.Compare(b.frac, a.frac); x != 0 {
			return x
		}
		return cmp.Compare(a.rt.d.Priority, b.rt.d.Priority)
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(cands) >= 2 {
		a, b := cands[0], cands[1]
		if r.rng.Float64()*(a.rt.d.Weight+b.rt.d.Weight) >= a.rt.d.Weight {
			cands[0], cands[1] = b, a
		}
	}
	if c.Session != "" {
		if last := r.sessions[c.Session]; last != nil {
			for i, cd := range cands {
				if cd.rt == last && cd.frac >= *r.cfg.AffinityThreshold {
					copy(cands[1:i+1], cands[:i])
					cands[0] = cd
					return cands, true
				}
			}
		}
	}
	return cands, false
}

// jitter spreads the processes that all wait for one moment (the next
// admission slot, a window's start) over up to maxJitter, so they do not
// all ask the store at that instant: one of them gets the slot either
// way. Within a process the queue already lets one waiter through at a
// time.
func (r *Router) jitter(wait time.Duration) time.Duration {
	if wait <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(r.rng.Int64N(int64(min(wait/4, maxJitter)) + 1))
}

// maxJitter bounds jitter: a few milliseconds spread a herd of hundreds
// of processes over more time than the store takes to answer them.
const maxJitter = 5 * time.Millisecond

func (r *Router) earliestClose(cands []candidate) time.Duration {
	wait := time.Duration(-1)
	now := time.Now()
	for _, cd := range cands {
		w := max(cd.u.OpenUntil.Sub(cd.u.Now), cd.rt.br.until(now))
		if w > 0 && (wait < 0 || w < wait) {
			wait = w
		}
	}
	if wait <= 0 {
		wait = 50 * time.Millisecond
	}
	return wait
}
