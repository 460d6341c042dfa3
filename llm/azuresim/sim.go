// Package azuresim simulates Azure OpenAI's front door: deployments that are
// allowances (tokens per minute charged on an estimate at admission, requests
// limited on 1 s and 10 s windows), quota pools that several deployments
// share, temporary lowering of limits, Azure's headers and error bodies, and
// the faults a real endpoint has. Clients can be developed, tested and
// load-tested against it without spending quota.
//
// It is not a model: replies come from a small Model (echo, fixed length,
// or one the caller registers, such as the heuristic stand-in of package
// heuristic that answers the built-in call types from their input).
package azuresim

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Options are the parts of a simulator that are not in its config file.
type Options struct {
	// APIKeys, when set, are the only keys that pass; otherwise any
	// non-empty key does.
	APIKeys []string
	// Models adds reply behaviours, by the name a deployment's reply
	// field uses, to the built-in echo and fixed.
	Models map[string]Model
	// ReadTimeout bounds reading a request, headers and body: a client
	// that sends less than it announced is cut off after it. 0 is
	// DefaultReadTimeout.
	ReadTimeout time.Duration
}

// DefaultReadTimeout is how long a request may take to arrive.
const DefaultReadTimeout = 10 * time.Second

// Sim is a running simulator. Its handlers are safe for concurrent use.
type Sim struct {
	window time.Duration
	refund RefundPolicy
	keys   map[string]bool
	start  time.Time
	// readTimeout bounds reading a request (Options.ReadTimeout).
	readTimeout time.Duration
	// clock is what the prompt cache reads the time from; tests move it.
	clock func() time.Time

	mu        sync.Mutex // guards meters, stats, the random source
	rng       *rand.Rand
	resources []*resource
}

type resource struct {
	sim         *Sim
	name        string
	addr        string
	prefix      string
	region      string
	tag         string // marks the ids this resource mints
	deployments map[string]*deployment
	names       []string // deployments in configuration order
	items       *itemStore
}

type deployment struct {
	res    *resource
	cfg    Deployment
	own    *meter
	pool   *meter // nil when the deployment has its quota to itself
	pooled string // the pool's name or key, for stats
	faults Faults
	model  Model
	stats  Stats
	cache  *promptCache // nil when the deployment keeps none
	// noise draws the estimate_noise factors: a source of its own, seeded
	// from the simulator's seed and the deployment's name, so a
	// deployment's sequence of charges repeats whatever else draws.
	noise *rand.Rand
	// lags is when each call admitted in the last 10 s window was
	// counted and how late past its dispatch delay, oldest first: what a
	// refusal reads its window's lateness from, from lagsHead on.
	lags     []countLag
	lagsHead int
}

// countLag is one admission's count time and the simulator's lateness
// in counting it.
type countLag struct {
	at  time.Time
	lag time.Duration
}

// New builds a simulator from cfg.
func New(cfg Config, opts Options) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{
		window: cmp.Or(cfg.Window, DefaultWindow),
		refund: cmp.Or(cfg.Refund.normal(), Hold),
		start:  time.Now(),
		clock:  time.Now,

		readTimeout: cmp.Or(opts.ReadTimeout, DefaultReadTimeout),
	}
	seed := uint64(cfg.Seed)
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	s.rng = rand.New(rand.NewPCG(seed, seed>>1|1))
	if len(opts.APIKeys) > 0 {
		s.keys = map[string]bool{}
		for _, k := range opts.APIKeys {
			s.keys[k] = true
		}
	}
	models := map[string]Model{"echo": Echo{}, "fixed": Fixed{}}
	for name, m := range opts.Models {
		models[name] = m
	}
	declared := map[string]Pool{}
	for _, p := range cfg.Pools {
		declared[p.Name] = p
	}
	members := map[string][]*deployment{}
	for _, rc := range cfg.allResources() {
		r := &resource{
			sim: s, name: rc.Name, addr: rc.Addr, prefix: rc.PathPrefix, region: rc.Region,
			tag:         resourceTag(rc.Name),
			deployments: map[string]*deployment{},
			items:       newItemStore(100_000),
		}
		for _, dc := range rc.Deployments {
			if dc.RPM == 0 {
				dc.RPM = DefaultRPM(dc.Model, dc.TPM)
			}
			if dc.Region == "" {
				dc.Region = rc.Region
			}
			d := &deployment{res: r, cfg: dc, own: newMeter(dc.TPM, dc.RPM, s.window), faults: cfg.Faults}
			d.own.slide(dc.RequestWindows.sliding(), dc.TokenWindow.sliding())
			if dc.EstimateNoise > 0 {
				h := sha256.Sum256([]byte(rc.Name + "/" + dc.Name))
				d.noise = rand.New(rand.NewPCG(seed, binary.BigEndian.Uint64(h[:8])))
			}
			if dc.Faults != nil {
				d.faults = *dc.Faults
			}
			if !dc.CacheOff {
				d.cache = newPromptCache(cmp.Or(dc.CacheIdle, DefaultCacheIdle), maxCacheEntries)
			}
			name := cmp.Or(dc.Reply, "echo")
			if d.model = models[name]; d.model == nil {
				return nil, fmt.Errorf("deployment %q: reply %q is not a known behaviour (echo, fixed, or one given in Options.Models)", dc.Name, name)
			}
			for _, a := range dc.Adjustments {
				from := s.start.Add(a.At)
				d.own.adjust = append(d.own.adjust, adjustment{from: from, until: from.Add(a.For), factor: a.Factor})
			}
			if key := poolKey(dc); key != "" {
				members[key] = append(members[key], d)
			}
			r.deployments[dc.Name] = d
			r.names = append(r.names, dc.Name)
		}
		s.resources = append(s.resources, r)
	}
	for key, ds := range members {
		p, explicit := declared[key]
		if len(ds) < 2 && !explicit {
			continue
		}
		if !explicit {
			// Five names, one number: undeclared deployments that share
			// subscription, region, type and model share the largest
			// limit any of them claims.
			for _, d := range ds {
				p.TPM = max(p.TPM, d.cfg.TPM)
				p.RPM = max(p.RPM, d.cfg.RPM)
			}
		}
		if p.RPM == 0 {
			p.RPM = DefaultRPM(ds[0].cfg.Model, p.TPM)
		}
		m := newMeter(p.TPM, p.RPM, s.window)
		// Members agree on their window rules (Validate sees to it).
		m.slide(ds[0].cfg.RequestWindows.sliding(), ds[0].cfg.TokenWindow.sliding())
		for _, d := range ds {
			d.pool, d.pooled = m, key
		}
	}
	return s, nil
}

// poolKey names the quota a deployment draws on, or "" for its own.
func poolKey(d Deployment) string {
	if d.Pool != "" {
		return d.Pool
	}
	if d.Subscription == "" || d.Region == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s/%s", d.Subscription, d.Region, cmp.Or(d.Type, "standard"), d.Model)
}

// resourceTag is a short, stable mark of a resource, put into the ids it
// mints so any resource can tell that an id is not its own.
func resourceTag(name string) string {
	h := sha256.Sum256([]byte(name))
	return hex.EncodeToString(h[:4])
}

// Window is the token-rate window length in force.
func (s *Sim) Window() time.Duration { return s.window }

// ticket is an admitted call: what it was charged, and where (the
// handles the meters' refund takes).
type ticket struct {
	d       *deployment
	cost    int64
	ownRef  int64
	poolRef int64
}

// admit charges a call estimated at estimate tokens, and one request, to d
// and its pool, or to neither, at now, lag past the dispatch delay it
// drew (the simulator's own lateness). On refusal it says why and how
// long until room frees.
func (s *Sim) admit(d *deployment, estimate int64, now time.Time, lag time.Duration) (*ticket, *refusal, state) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.stats.CountLagMax = max(d.stats.CountLagMax, lag)
	cost := d.charge(estimate)
	refusals := d.own.check(now, cost)
	if d.pool != nil {
		refusals = append(refusals, d.pool.check(now, cost)...)
	}
	if len(refusals) > 0 {
		// The longest wait is the one that binds; on a tie the token
		// cause says more than the request one.
		r := slices.MaxFunc(refusals, func(a, b refusal) int {
			if c := cmp.Compare(a.wait, b.wait); c != 0 {
				return c
			}
			return cmp.Compare(rank(a.cause), rank(b.cause))
		})
		switch r.cause {
		case CauseTokens:
			d.stats.RateLimited.Tokens++
		case CauseRequests:
			d.stats.RateLimited.Requests++
			d.logRefusal(r, now, lag)
		case CauseAdjustment:
			d.stats.RateLimited.Adjustment++
		}
		st := s.stateLocked(d, now)
		if r.cause == CauseRequests {
			st.remainingRequests = 0
		}
		return nil, &r, st
	}
	t := &ticket{d: d, cost: cost, ownRef: d.own.charge(cost)}
	if d.pool != nil {
		t.poolRef = d.pool.charge(cost)
	}
	d.noteLag(now, lag)
	d.stats.Accepted++
	if d.stats.FirstAccepted.IsZero() {
		d.stats.FirstAccepted = now
	}
	d.stats.LastAccepted = now
	d.stats.TokensCharged += cost
	d.stats.TokensEstimated += estimate
	return t, nil, s.stateLocked(d, now)
}

// logRefusal keeps a request-window refusal in d's log while it has room,
// with the simulator's own lateness in counting the refused call (lag) or
// any call its window holds.
func (d *deployment) logRefusal(r refusal, now time.Time, lag time.Duration) {
	if r.full == nil || len(d.stats.Refusals) >= MaxRefusals {
		return
	}
	for _, l := range d.lags[d.lagsHead:] {
		if l.at.After(now.Add(-r.full.length)) {
			lag = max(lag, l.lag)
		}
	}
	d.stats.Refusals = append(d.stats.Refusals, Refusal{At: now, Window: r.full.length, Limit: r.limit, Held: r.full.held(), CountLagMax: lag})
}

// noteLag keeps an admission's count lag while the longest request window
// could still hold it. lagsHead skips the ones aged out, which are copied
// over once they are half the log: O(1) an admission, amortised.
func (d *deployment) noteLag(now time.Time, lag time.Duration) {
	from := now.Add(-d.own.req10.length)
	for d.lagsHead < len(d.lags) && !d.lags[d.lagsHead].at.After(from) {
		d.lagsHead++
	}
	if 2*d.lagsHead >= len(d.lags) {
		d.lags, d.lagsHead = d.lags[:copy(d.lags, d.lags[d.lagsHead:])], 0
	}
	d.lags = append(d.lags, countLag{at: now, lag: lag})
}

// charge is what the server charges a call the character rule estimates
// at estimate: the same, unless the deployment's estimate_scale or
// estimate_noise make the server's count differ from what a client
// following the rule expects. It draws from d.noise, under s.mu.
func (d *deployment) charge(estimate int64) int64 {
	f := cmp.Or(d.cfg.EstimateScale, 1)
	if d.noise != nil {
		f *= 1 + (d.noise.Float64()*2-1)*d.cfg.EstimateNoise
	}
	if f == 1 {
		return estimate
	}
	return max(1, int64(math.Round(float64(estimate)*f)))
}

func rank(c Cause) int {
	if c == CauseRequests {
		return 0
	}
	return 1
}

func (s *Sim) stateLocked(d *deployment, now time.Time) state {
	st := d.own.state(now)
	if d.pool != nil {
		st = tighter(st, d.pool.state(now))
	}
	return st
}

// done settles an admitted call with what it really used.
func (s *Sim) done(t *ticket, promptTokens, completionTokens int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := t.d
	d.stats.PromptTokens += promptTokens
	d.stats.CompletionTokens += completionTokens
	if s.refund != Refund {
		return
	}
	unused := t.cost - (promptTokens + completionTokens)
	if unused <= 0 {
		return
	}
	d.own.refund(t.ownRef, unused)
	if d.pool != nil {
		d.pool.refund(t.poolRef, unused)
	}
	d.stats.TokensRefunded += unused
}

// chance draws from the simulator's random source.
func (s *Sim) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p
}

// latency is how long d takes to produce n tokens.
func (s *Sim) latency(d *deployment, n int64) time.Duration {
	f := d.faults
	base := f.Latency + time.Duration(n)*f.LatencyPerToken
	if base <= 0 || f.Jitter <= 0 {
		return base
	}
	s.mu.Lock()
	j := (s.rng.Float64()*2 - 1) * f.Jitter
	s.mu.Unlock()
	return time.Duration(float64(base) * (1 + j))
}

// dispatchDelay is how long a call to d waits before the server counts it.
func (s *Sim) dispatchDelay(d *deployment) time.Duration {
	base, jitter, tail := d.cfg.DispatchDelay, d.cfg.DispatchJitter, d.cfg.DispatchTail
	switch {
	case base <= 0:
		return base
	case tail > 0:
		s.mu.Lock()
		z := s.rng.NormFloat64()
		s.mu.Unlock()
		return min(cmp.Or(d.cfg.DispatchMax, 20*base), time.Duration(float64(base)*math.Exp(tail*z)))
	case jitter > 0:
		s.mu.Lock()
		j := (s.rng.Float64()*2 - 1) * jitter
		s.mu.Unlock()
		return time.Duration(float64(base) * (1 + j))
	}
	return base
}

// ErrNoDeployment is returned by Adjust for an unknown deployment.
var ErrNoDeployment = errors.New("no such deployment")

// Adjust lowers the effective token limit of the named deployment to
// factor × its configured limit for d, starting now.
func (s *Sim) Adjust(resource, name string, factor float64, d time.Duration) error {
	if err := checkAdjustment(factor, d, "adjustment", func(f, format string, args ...any) error {
		return fmt.Errorf(format, args...)
	}); err != nil {
		return err
	}
	dep := s.lookup(resource, name)
	if dep == nil {
		return fmt.Errorf("%w %q in resource %q", ErrNoDeployment, name, resource)
	}
	now := time.Now()
	s.mu.Lock()
	dep.own.adjust = append(dep.own.adjust, adjustment{from: now, until: now.Add(d), factor: factor})
	s.mu.Unlock()
	return nil
}

func (s *Sim) lookup(resource, name string) *deployment {
	for _, r := range s.resources {
		if r.name == resource {
			return r.deployments[name]
		}
	}
	return nil
}

// ResourceAddr is the address a resource asked for ("" for the main one).
func (s *Sim) ResourceAddr(name string) string {
	for _, r := range s.resources {
		if r.name == name {
			return r.addr
		}
	}
	return ""
}

// ResourcePrefix is the path prefix a resource is served under.
func (s *Sim) ResourcePrefix(name string) string {
	for _, r := range s.resources {
		if r.name == name {
			return r.prefix
		}
	}
	return ""
}
