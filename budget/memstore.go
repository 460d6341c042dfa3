package budget

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

// memDriver keeps the counters in this process: the single-process
// default, and the store for users without Redis.
type memDriver struct {
	opts MemOptions

	mu    sync.Mutex
	deps  map[string]*memDeployment
	res   map[string]*memReservation
	sweep time.Time // next time stale entries are dropped

	agents     map[string]time.Time           // alive until
	r429       map[string]map[int64]*[4]int64 // by deployment, then window index
	lost       map[string]memLost             // by deployment
	prompt     map[string]memPrompt           // by deployment
	tally      Tally                          // the fleet's totals
	tallyUntil time.Time                      // when they expire
	cal        map[string]learning.Calibration
}

// MemOptions configure NewMemStore. The zero value works.
type MemOptions struct {
	Window time.Duration // default DefaultWindow
	Policy Policy        // default Hold
	// Now is the clock; default time.Now.
	Now func() time.Time
}

type memDeployment struct {
	tok      tokenWindow // current
	prev     tokenWindow // the one before, for settles that arrive late
	w1, c1   int64
	w10, c10 int64

	next     int64 // earliest next admission (ms), with Limits.Spacing
	eff      int64
	effUntil time.Time
	open     time.Time
	touched  time.Time
}

type tokenWindow struct {
	index                   int64
	reserved, settled, used int64
	absorbed                int64 // the part of reserved that Absorb added
}

type memReservation struct {
	r       Reservation
	done    bool // settled or cancelled
	expires time.Time
}

// NewMemStore returns a Store whose counters live in this process: the
// one process's default, and a budget without Redis. Its census counts
// this process's agents, and what it learns serves this process alone.
func NewMemStore(o MemOptions) *Store { return &Store{d: newMemDriver(o)} }

func newMemDriver(o MemOptions) *memDriver {
	if o.Window < MinWindow {
		o.Window = DefaultWindow
	}
	if o.Policy == "" {
		o.Policy = Hold
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &memDriver{opts: o, deps: map[string]*memDeployment{}, res: map[string]*memReservation{}}
}

func (s *memDriver) Window() time.Duration { return s.opts.Window }

// Flush has nothing to do: settles apply at once.
func (s *memDriver) Flush(context.Context) error { return nil }

func (s *memDriver) Close() error { return nil }

// dep returns the deployment's state with its windows rolled to now.
func (s *memDriver) dep(name string, now time.Time) *memDeployment {
	d := s.deps[name]
	if d == nil {
		d = &memDeployment{}
		s.deps[name] = d
	}
	wt, w1, w10 := windowLengths(s.opts.Window)
	ms := now.UnixMilli()
	if i := ms / wt; i != d.tok.index {
		if i == d.tok.index+1 {
			d.prev = d.tok
		} else {
			d.prev = tokenWindow{}
		}
		d.tok = tokenWindow{index: i}
	}
	if i := ms / w1; i != d.w1 {
		d.w1, d.c1 = i, 0
	}
	if i := ms / w10; i != d.w10 {
		d.w10, d.c10 = i, 0
	}
	if !d.effUntil.After(now) {
		d.eff = 0
	}
	d.touched = now
	return d
}

func (s *memDriver) Reserve(ctx context.Context, id, deployment string, cost Cost, lim Limits) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	key := deployment + "\x00" + id
	if old, ok := s.res[key]; ok {
		return old.r, nil
	}
	d := s.dep(deployment, now)
	if err := refuse(deployment, d, cost, lim, now, s.opts.Window); err != nil {
		return Reservation{}, err
	}
	d.tok.reserved += cost.Tokens
	var carried int64
	if d.prev.index == d.tok.index-1 {
		wt := s.opts.Window.Milliseconds()
		carried = d.prev.reserved * ((d.tok.index+1)*wt - now.UnixMilli()) / wt
	}
	d.c1 += cost.requests()
	d.c10 += cost.requests()
	if sp := lim.SpacingMS(); sp > 0 {
		d.next = now.UnixMilli() + sp
	}
	r := Reservation{
		ID: id, Deployment: deployment, Tokens: cost.Tokens, Requests: cost.requests(),
		Window: d.tok.index, Window1s: d.w1, Window10s: d.w10, At: now, Held: d.tok.reserved, Absorbed: d.tok.absorbed, Carried: carried,
	}
	s.res[key] = &memReservation{r: r, expires: now.Add(2 * s.opts.Window)}
	return r, nil
}

// refuse applies the admission rules the Redis script applies too.
func refuse(name string, d *memDeployment, cost Cost, lim Limits, now time.Time, window time.Duration) error {
	wt, w1, w10 := windowLengths(window)
	ms := now.UnixMilli()
	if d.open.After(now) {
		return &Refusal{Deployment: name, Limit: LimitBreaker, Wait: d.open.Sub(now)}
	}
	var worst *Refusal
	consider := func(l Limit, wait int64) {
		if worst == nil || time.Duration(wait)*time.Millisecond > worst.Wait {
			worst = &Refusal{Deployment: name, Limit: l, Wait: time.Duration(wait) * time.Millisecond}
		}
	}
	capTokens := lim.TokenCap(d.eff)
	if cost.Tokens > capTokens {
		return &Refusal{Deployment: name, Limit: LimitTokens, Wait: time.Duration((d.tok.index+1)*wt-ms) * time.Millisecond, TooLarge: true}
	}
	held, carried, prev := d.tok.reserved, int64(0), int64(0)
	if lim.Sliding && d.prev.index == d.tok.index-1 {
		prev = d.prev.reserved
		carried = prev * ((d.tok.index+1)*wt - ms) / wt
		held += carried
	}
	if held+cost.Tokens > capTokens {
		at := (d.tok.index+1)*wt - ms
		if lim.Sliding && d.tok.reserved+cost.Tokens <= capTokens && prev > 0 {
			// Room frees as the carried part ages out.
			at = max(1, (held+cost.Tokens-capTokens)*wt/prev+1)
		}
		consider(LimitTokens, at)
	}
	if d.c1+cost.requests() > lim.PerSecond() {
		consider(LimitRequests1s, (d.w1+1)*w1-ms)
	}
	if d.c10+cost.requests() > lim.PerTenSeconds() {
		consider(LimitRequests10s, (d.w10+1)*w10-ms)
	}
	if lim.Spacing > 0 && d.next > ms {
		consider(LimitSpacing, d.next-ms)
	}
	if worst != nil {
		return worst
	}
	return nil
}

func (s *memDriver) Settle(ctx context.Context, r Reservation, actual int64) error {
	return s.finish(r, actual, false)
}

func (s *memDriver) Cancel(ctx context.Context, r Reservation) error {
	return s.finish(r, 0, true)
}

func (s *memDriver) finish(r Reservation, actual int64, cancel bool) error {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mr, ok := s.res[r.Deployment+"\x00"+r.ID]
	if !ok || mr.done || !mr.expires.After(now) {
		return nil
	}
	mr.done = true
	r = mr.r // trust what was recorded, not what the caller holds
	d := s.dep(r.Deployment, now)
	w := &d.tok
	if r.Window != w.index {
		w = &d.prev
		if r.Window != w.index {
			return nil // the window is gone
		}
	}
	if cancel {
		w.reserved = max(0, w.reserved-r.Tokens)
		if d.w1 == r.Window1s {
			d.c1 = max(0, d.c1-r.Requests)
		}
		if d.w10 == r.Window10s {
			d.c10 = max(0, d.c10-r.Requests)
		}
		return nil
	}
	w.settled += r.Tokens
	w.used += actual
	if s.opts.Policy == Refund && actual < r.Tokens {
		w.reserved = max(0, w.reserved-(r.Tokens-actual))
	}
	return nil
}

func (s *memDriver) Absorb(ctx context.Context, deployment string, tokens, requests int64) error {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dep(deployment, now)
	d.tok.reserved += tokens
	d.tok.absorbed += tokens
	d.c10 += requests // the 10 s window only, as Store.Absorb says
	return nil
}

func (s *memDriver) SetEffectiveLimit(ctx context.Context, deployment string, tokens int64, ttl time.Duration) error {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dep(deployment, now)
	d.eff, d.effUntil = tokens, now.Add(ttl)
	return nil
}

func (s *memDriver) OpenBreaker(ctx context.Context, deployment string, dur time.Duration) (time.Time, error) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dep(deployment, now)
	if until := now.Add(dur); until.After(d.open) {
		d.open = until
	}
	if !d.open.After(now) {
		return time.Time{}, nil
	}
	return d.open, nil
}

func (s *memDriver) Usage(ctx context.Context, deployments ...string) ([]Usage, error) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Usage, len(deployments))
	for i, name := range deployments {
		u := Usage{Deployment: name, Now: now}
		if _, ok := s.deps[name]; ok {
			d := s.dep(name, now)
			u.Window = d.tok.index
			u.Reserved, u.Settled, u.Used, u.Absorbed = d.tok.reserved, d.tok.settled, d.tok.used, d.tok.absorbed
			if d.prev.index == d.tok.index-1 {
				wt := s.opts.Window.Milliseconds()
				u.Carried = d.prev.reserved * ((d.tok.index+1)*wt - now.UnixMilli()) / wt
			}
			u.Requests1s, u.Requests10s = d.c1, d.c10
			u.EffectiveLimit = d.eff
			if d.open.After(now) {
				u.OpenUntil = d.open
			}
		} else {
			u.Window = now.UnixMilli() / s.opts.Window.Milliseconds()
		}
		out[i] = u
	}
	return out, nil
}

// Footprint counts the entries held for a deployment after dropping what
// has expired: zero once it has been idle for two windows.
func (s *memDriver) Footprint(deployment string) int {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep = time.Time{}
	s.sweepLocked(now)
	n := 0
	if _, ok := s.deps[deployment]; ok {
		n++
	}
	for _, r := range s.res {
		if r.r.Deployment == deployment {
			n++
		}
	}
	return n
}

// sweepLocked drops reservations and deployments untouched for two windows,
// at most once a window, as Redis expires its keys.
func (s *memDriver) sweepLocked(now time.Time) {
	if now.Before(s.sweep) {
		return
	}
	s.sweep = now.Add(s.opts.Window)
	for k, r := range s.res {
		if !r.expires.After(now) {
			delete(s.res, k)
		}
	}
	for k, d := range s.deps {
		if now.Sub(d.touched) >= 2*s.opts.Window && !d.open.After(now) && !d.effUntil.After(now) {
			delete(s.deps, k)
		}
	}
}

var _ Census = (*memDriver)(nil)

// causes orders the 429 causes as the census keeps them.
var causes = [4]Cause{CauseTokens, CauseRequests, CauseAdjustment, CauseUnknown}

func causeIndex(c Cause) int {
	for i, x := range causes {
		if x == c {
			return i
		}
	}
	return 3
}

func (s *memDriver) Checkin(ctx context.Context, agent string, ttl time.Duration) error {
	if agent == "" || ttl <= 0 {
		return errors.New("budget: a check-in needs an agent and a time to live")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agents == nil {
		s.agents = map[string]time.Time{}
	}
	now := s.opts.Now()
	s.agents[agent] = now.Add(ttl)
	for a, until := range s.agents {
		if !until.After(now) {
			delete(s.agents, a)
		}
	}
	return nil
}

func (s *memDriver) Checkout(ctx context.Context, agent string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.agents, agent)
	return nil
}

func (s *memDriver) Count429(ctx context.Context, deployment string, cause Cause) error {
	if deployment == "" {
		return errors.New("budget: a 429 needs its deployment")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r429 == nil {
		s.r429 = map[string]map[int64]*[4]int64{}
	}
	idx := s.opts.Now().UnixNano() / int64(s.opts.Window)
	byWin := s.r429[deployment]
	if byWin == nil {
		byWin = map[int64]*[4]int64{}
		s.r429[deployment] = byWin
	}
	for w := range byWin {
		if w < idx-1 {
			delete(byWin, w)
		}
	}
	if byWin[idx] == nil {
		byWin[idx] = &[4]int64{}
	}
	byWin[idx][causeIndex(cause)]++
	return nil
}

func (s *memDriver) CountLostWrites(ctx context.Context, deployment string, n int64) error {
	if deployment == "" || n <= 0 {
		return errors.New("budget: lost writes need their deployment and a count above 0")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]memLost{}
	}
	now := s.opts.Now()
	l := s.lost[deployment]
	if !l.until.After(now) {
		l.n = 0
	}
	s.lost[deployment] = memLost{l.n + n, now.Add(LostWritesKept)}
	return nil
}

func (s *memDriver) CountPrompt(ctx context.Context, deployment string, prompt, cached int64) error {
	if deployment == "" || prompt < 0 || cached < 0 || cached > prompt {
		return errors.New("budget: prompt tokens need their deployment, and a cached part of at most the prompt")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prompt == nil {
		s.prompt = map[string]memPrompt{}
	}
	now := s.opts.Now()
	p := s.prompt[deployment]
	if !p.until.After(now) {
		p.n = PromptTokens{}
	}
	s.prompt[deployment] = memPrompt{PromptTokens{p.n.Prompt + prompt, p.n.Cached + cached}, now.Add(PromptKept)}
	return nil
}

// AddTally adds t's totals to the fleet's, all kept TallyKept after the
// last added, as one Redis key is.
func (s *memDriver) AddTally(ctx context.Context, t Tally) error {
	if err := t.Check(); err != nil {
		return err
	}
	if len(t) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if s.tally == nil || !s.tallyUntil.After(now) {
		s.tally = Tally{}
	}
	s.tally.Add(t)
	s.tallyUntil = now.Add(TallyKept)
	return nil
}

// ReadTally returns a copy of the fleet's totals; none once they expired.
func (s *memDriver) ReadTally(ctx context.Context) (Tally, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Tally{}
	if s.tallyUntil.After(s.opts.Now()) {
		out.Add(s.tally)
	}
	return out, nil
}

// memPrompt is a deployment's prompt sums, and when they expire.
type memPrompt struct {
	n     PromptTokens
	until time.Time
}

// memLost is a deployment's count of lost writes, and when it expires.
type memLost struct {
	n     int64
	until time.Time
}

func (s *memDriver) Count(ctx context.Context, deployments ...string) (Count, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	c := Count{RateLimited: map[string]map[Cause]int64{}, LostWrites: map[string]int64{}, Prompt: map[string]PromptTokens{}}
	for _, until := range s.agents {
		if until.After(now) {
			c.Agents++
		}
	}
	idx := now.UnixNano() / int64(s.opts.Window)
	for _, d := range deployments {
		m := map[Cause]int64{}
		for _, w := range []int64{idx - 1, idx} {
			if n := s.r429[d][w]; n != nil {
				for i, x := range n {
					m[causes[i]] += x
				}
			}
		}
		c.RateLimited[d] = m
		if l := s.lost[d]; l.until.After(now) {
			c.LostWrites[d] = l.n
		}
		if p := s.prompt[d]; p.until.After(now) {
			c.Prompt[d] = p.n
		}
	}
	return c, nil
}

var _ Calibrator = (*memDriver)(nil)

func (s *memDriver) UpdateCalibration(ctx context.Context, deployment string, f func(learning.Calibration) learning.Calibration) (learning.Calibration, error) {
	if deployment == "" {
		return learning.Calibration{}, errors.New("budget: a calibration needs its deployment")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cal == nil {
		s.cal = map[string]learning.Calibration{}
	}
	c := f(s.cal[deployment])
	s.cal[deployment] = c
	return c, nil
}

func (s *memDriver) Calibrations(ctx context.Context, deployments ...string) ([]learning.Calibration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]learning.Calibration, len(deployments))
	for i, d := range deployments {
		out[i] = s.cal[d]
	}
	return out, nil
}
