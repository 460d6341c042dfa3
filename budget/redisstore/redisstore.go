// Package redisstore keeps the budget's counters in Redis, shared by every
// process of a fleet.
//
// Each reservation is one Lua script and one round trip; windows come from
// Redis TIME, never from a container's clock; every key of a deployment
// shares one hash tag, so the store works unchanged on Redis Cluster; every
// key expires within two windows, so a container that dies mid-call leaks
// nothing past that; and reservations are idempotent by id, so a command
// re-sent after a read timeout never charges twice.
package redisstore

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
)

var (
	//go:embed reserve.lua
	reserveSrc string
	//go:embed finish.lua
	finishSrc string
	//go:embed usage.lua
	usageSrc string
	//go:embed breaker.lua
	breakerSrc string
	//go:embed absorb.lua
	absorbSrc string
	//go:embed census429.lua
	census429Src string
	//go:embed censusagents.lua
	censusAgentsSrc string

	reserveScript = redis.NewScript(reserveSrc)
	finishScript  = redis.NewScript(finishSrc)
	usageScript   = redis.NewScript(usageSrc)
	breakerScript = redis.NewScript(breakerSrc)
	absorbScript  = redis.NewScript(absorbSrc)

	census429Script    = redis.NewScript(census429Src)
	censusAgentsScript = redis.NewScript(censusAgentsSrc)
)

// Options configure a store. The zero value works with Client set.
type Options struct {
	// Client is the connection; see Dial for one with the right timeouts.
	Client redis.UniversalClient
	// Prefix namespaces the keys (default "hr"), so several fleets or
	// tests can share one server.
	Prefix string
	Window time.Duration // default budget.DefaultWindow
	Policy budget.Policy // default budget.Hold
	// Patience is how long New waits for a server that does not answer
	// (DefaultPatience when zero), and how long a settle is sent again
	// while the server does not answer it.
	Patience time.Duration
}

// Driver is the Redis driver beneath a budget.Store: each deployment's
// counters under one hash tag, changed by Lua scripts, so a reservation
// is one atomic round trip whichever process makes it.
type Driver struct {
	rdb      redis.UniversalClient
	prefix   string
	window   time.Duration
	policy   budget.Policy
	patience time.Duration

	reserves batchers[reserveItem]
	finishes batchers[finishItem]
	lost     lostSettles // settles the queue gave up on, for Flush and Close
	lastFail atomic.Pointer[failure]
}

var _ budget.Driver = (*Driver)(nil)

// DefaultTimeout bounds every call to Redis: a budget that cannot answer
// in this long is treated as unavailable rather than waited on.
const DefaultTimeout = 300 * time.Millisecond

// dialTimeout bounds a connection's opening, longer than a round trip: a
// fleet starting on a packed host dials all at once, and a process the
// scheduler does not run for a moment sees its connect time out though the
// server answered it. A server that refuses is known at once either way.
const dialTimeout = time.Second

// Dial connects to the Redis at rawURL with settings fit for a budget:
// short timeouts that honour the context, one re-send (safe: every script
// is idempotent) and no dial retry storm. The URL is one of
//
//	redis://host:port/db                         one server (rediss:// for TLS)
//	redis://host1:port1?addr=host2:port2&addr=…  a Redis Cluster, by several of its nodes
//	redis+cluster://host:port                    a Redis Cluster, by one node or a
//	                                             configuration endpoint (rediss+cluster:// for TLS)
//
// and a cluster form gives a *redis.ClusterClient.
func Dial(rawURL string, poolSize int) (redis.UniversalClient, error) {
	quiet.Do(func() { redis.SetLogger(discard{}) })
	clusterURL, err := clusterForm(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", Redact(rawURL), err)
	}
	if clusterURL != "" {
		o, err := redis.ParseClusterURL(clusterURL)
		if err != nil {
			return nil, fmt.Errorf("redis url %q: %w", Redact(rawURL), err)
		}
		tune(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.ContextTimeoutEnabled, &o.MaxRetries, &o.DialerRetries)
		if poolSize > 0 {
			o.PoolSize = poolSize // per node
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis url %q: %w", Redact(rawURL), err)
	}
	tune(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.ContextTimeoutEnabled, &o.MaxRetries, &o.DialerRetries)
	if poolSize > 0 {
		o.PoolSize = poolSize
	}
	return redis.NewClient(o), nil
}

// tune sets what a budget wants of either client's options, which are two
// types with the same fields: every wait bounded by DefaultTimeout (a dial
// by dialTimeout) and the context, one re-send, one dial retry.
func tune(dial, read, write, pool *time.Duration, ctxTimeout *bool, retries, dialerRetries *int) {
	*dial, *read, *write, *pool = dialTimeout, DefaultTimeout, DefaultTimeout, DefaultTimeout
	*ctxTimeout, *retries, *dialerRetries = true, 1, 1
}

// clusterForm returns rawURL in the form redis.ParseClusterURL reads when
// it names a Redis Cluster, and "" when it names one server.
func clusterForm(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's own error quotes the URL, password and all.
		return "", errors.New("not a URL: write redis://host:port/db")
	}
	q := u.Query()
	base, cluster := strings.CutSuffix(u.Scheme, "+cluster")
	switch {
	case cluster && base != "redis" && base != "rediss":
		return "", fmt.Errorf("scheme %q: a cluster URL is redis+cluster:// or rediss+cluster://", u.Scheme)
	case !cluster && (u.Scheme == "redis" || u.Scheme == "rediss") && q.Has("addr"):
		cluster = true
	case !cluster:
		return "", nil
	}
	for _, a := range q["addr"] {
		// go-redis would take "user:pass@host:port" for a host "user" and
		// a port "pass@host:port", and repeat it in dial errors.
		if strings.Contains(a, "@") {
			return "", errors.New("addr= takes host:port only: the user and password go before the first host, for every node")
		}
	}
	db := strings.Trim(u.Path, "/")
	if q.Has("db") {
		db = q.Get("db")
		q.Del("db")
	}
	if db != "" && db != "0" {
		return "", fmt.Errorf("database %s on a Redis Cluster, which has only database 0: remove it from the URL", db)
	}
	u.Scheme, u.Path, u.RawPath, u.RawQuery = base, "", "", q.Encode()
	return u.String(), nil
}

// The client's own log lines ("failed to dial …") would repeat, on
// stderr, what every call already returns as a typed error.
var quiet sync.Once

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// Redact drops a password from a Redis URL, for messages.
func Redact(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	return u[:scheme+3] + "…" + u[at:]
}

// New returns a budget.Store on o.Client, its scripts loaded.
func New(ctx context.Context, o Options) (*budget.Store, error) {
	d, err := NewDriver(ctx, o)
	if err != nil {
		return nil, err
	}
	return budget.NewStore(d), nil
}

// NewDriver returns the driver New puts beneath its store, for a caller
// that needs the driver's own methods (Footprint, ReserveCall).
func NewDriver(ctx context.Context, o Options) (*Driver, error) {
	if o.Client == nil {
		return nil, errors.New("redisstore: Options.Client is nil")
	}
	s := &Driver{rdb: o.Client, prefix: o.Prefix, window: o.Window, policy: o.Policy}
	if s.prefix == "" {
		s.prefix = "hr"
	}
	if s.window == 0 {
		s.window = budget.DefaultWindow
	}
	s.patience = cmp.Or(o.Patience, DefaultPatience)
	if s.window < budget.MinWindow {
		return nil, fmt.Errorf("redisstore: window %v is under the minimum %v", s.window, budget.MinWindow)
	}
	if s.policy == "" {
		s.policy = budget.Hold
	}
	s.reserves.run = s.runReserves
	s.finishes.run = s.runFinishes
	// A fleet starting at once loads its scripts at once, and a server
	// that stalls (a failover, a starved host) does not answer for
	// seconds: a busy server is waited for, up to Patience or ctx's
	// deadline. One that refuses the connection is not there: that fails
	// at once.
	if err := retryBusy(ctx, o.Patience, func() error { return s.load(ctx) }); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultPatience is Options.Patience when it is zero.
const DefaultPatience = 30 * time.Second

// retryBusy runs f until it succeeds or fails with anything but a busy
// store (budget.StoreError.Busy), at budget.WaitToAskAgain's pace; it
// gives up after patience (DefaultPatience when
// zero), or at ctx's deadline when that comes first.
func retryBusy(ctx context.Context, patience time.Duration, f func() error) error {
	giveUp := time.Now().Add(cmp.Or(patience, DefaultPatience))
	if dl, ok := ctx.Deadline(); ok && dl.Before(giveUp) {
		giveUp = dl
	}
	for try := 1; ; try++ {
		err := f()
		var se *budget.StoreError
		if err == nil || ctx.Err() != nil || !errors.As(err, &se) || !se.Busy() || !budget.WaitToAskAgain(ctx, try, giveUp) {
			return err
		}
	}
}

var scripts = []struct {
	sc  *redis.Script
	src string
}{{reserveScript, reserveSrc}, {finishScript, finishSrc}, {usageScript, usageSrc}, {breakerScript, breakerSrc}, {absorbScript, absorbSrc},
	{census429Script, census429Src}, {censusAgentsScript, censusAgentsSrc}}

// load puts the scripts in the server's script cache. On a cluster each
// EVALSHA runs on the node owning its keys, so every node needs them
// (replicas too, as one may be promoted): one pipeline per node.
func (s *Driver) load(ctx context.Context) error {
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		err := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
			_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, x := range scripts {
					p.ScriptLoad(ctx, x.src)
				}
				return nil
			})
			return err
		})
		return wrap(ctx, "load scripts", err)
	}
	// One round trip for all of them.
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, x := range scripts {
			p.ScriptLoad(ctx, x.src)
		}
		return nil
	})
	return wrap(ctx, "load scripts", err)
}

func (s *Driver) Window() time.Duration { return s.window }

// Flush waits until the settles queued so far are written, and returns
// what could not be: the settles given up on since the last Flush, and
// a store failing now.
func (s *Driver) Flush(ctx context.Context) error {
	if err := s.finishes.flush(ctx); err != nil {
		return errors.Join(storeError("flush", err), s.lost.take())
	}
	return errors.Join(s.down("flush"), s.lost.take())
}

// Close sends the settles still queued (for up to a second), closes the
// client, and returns what it could not send: the settles given up on,
// those still queued, the client's own error.
func (s *Driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var queued error
	if err := s.finishes.flush(ctx); err != nil {
		queued = &budget.StoreError{Op: "close", Err: fmt.Errorf("settles still queued after a second: %w", err)}
	}
	return errors.Join(s.lost.take(), queued, s.rdb.Close())
}

// keys of one deployment, all under one hash tag.
func (s *Driver) tag(deployment string) string {
	return "{" + s.prefix + ":" + deployment + "}"
}

func (s *Driver) Reserve(ctx context.Context, id, deployment string, cost budget.Cost, lim budget.Limits) (budget.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return budget.Reservation{}, err
	}
	it := &reserveItem{id: id, cost: cost, lim: lim}
	ran, abandoned := s.reserves.get(deployment).do(ctx, it)
	if abandoned {
		// The caller is gone; if the reservation went through all the
		// same, give it back rather than hold it for two windows.
		go func() {
			<-ran
			if it.err == nil {
				_ = s.Cancel(context.Background(), it.res)
			}
		}()
		return budget.Reservation{}, ctx.Err()
	}
	return it.res, it.err
}

type reserveItem struct {
	id   string
	cost budget.Cost
	lim  budget.Limits
	res  budget.Reservation
	err  error
}

// runReserves sends one batch of reservations on deployment.
func (s *Driver) runReserves(deployment string) func(context.Context, []*reserveItem) {
	tag := s.tag(deployment)
	return func(ctx context.Context, items []*reserveItem) {
		keys := []string{tag + ":w", tag + ":eff", tag + ":open", tag + ":recs:0", tag + ":recs:1"}
		args := []any{s.window.Milliseconds()}
		for _, it := range items {
			margin := it.lim.MarginInForce()
			args = append(args, it.id, it.cost.Tokens, max(1, it.cost.Requests), it.lim.Tokens, it.lim.Requests,
				strconv.FormatFloat(margin, 'f', -1, 64), it.lim.SpacingMS(), b2s(it.lim.Sliding))
		}
		replies, err := reserveScript.Run(ctx, s.rdb, keys, args...).Slice()
		s.failed(err)
		if err == nil && len(replies) != len(items) {
			err = fmt.Errorf("%d replies for %d reservations", len(replies), len(items))
		}
		for i, it := range items {
			if err != nil {
				it.err = storeError("reserve", err)
				continue
			}
			it.res, it.err = parseReserve(deployment, it.id, replies[i])
		}
	}
}

func parseReserve(deployment, id string, reply any) (budget.Reservation, error) {
	v, _ := reply.([]any)
	switch {
	case len(v) >= 4 && num(v[0]) == 0:
		limit, _ := v[1].(string)
		return budget.Reservation{}, &budget.Refusal{
			Deployment: deployment,
			Limit:      budget.Limit(limit),
			Wait:       time.Duration(num(v[2])) * time.Millisecond,
			TooLarge:   num(v[3]) == 1,
		}
	case len(v) >= 7:
		r := budget.Reservation{
			ID: id, Deployment: deployment,
			Window: num(v[1]), Window1s: num(v[2]), Window10s: num(v[3]),
			Tokens: num(v[4]), Requests: num(v[5]),
			At: time.UnixMilli(num(v[6])),
		}
		if len(v) >= 10 {
			r.Held, r.Absorbed, r.Carried = num(v[7]), num(v[8]), num(v[9])
		}
		return r, nil
	}
	return budget.Reservation{}, fmt.Errorf("redisstore: reserve: unexpected reply %v", reply)
}

// ReserveCall is the reservation script's SHA1, keys and arguments for the
// reservation Reserve would make with the same arguments, for driving the
// same script from another tool (redis-benchmark) side by side with this
// client.
func (s *Driver) ReserveCall(id, deployment string, cost budget.Cost, lim budget.Limits) (sha string, keys, args []string) {
	tag := s.tag(deployment)
	keys = []string{tag + ":w", tag + ":eff", tag + ":open", tag + ":recs:0", tag + ":recs:1"}
	args = []string{fmt.Sprint(s.window.Milliseconds()), id, fmt.Sprint(cost.Tokens), fmt.Sprint(max(1, cost.Requests)),
		fmt.Sprint(lim.Tokens), fmt.Sprint(lim.Requests), strconv.FormatFloat(lim.MarginInForce(), 'f', -1, 64),
		fmt.Sprint(lim.SpacingMS()), b2s(lim.Sliding)}
	return reserveScript.Hash(), keys, args
}

// Settle is written behind: it is queued and sent with the deployment's
// next batch, so a call's path waits for one round trip (the reservation),
// not two. Flush waits for them, and Close sends what is left. A settle that is lost (the store went away)
// errs on the side of caution: the estimate stays charged until its window
// ends. Settle returns an error only when the store is known to be down.
func (s *Driver) Settle(ctx context.Context, r budget.Reservation, actual int64) error {
	// Queued even when the store is failing: it is sent again until the
	// store answers or Patience runs out. The error says it is failing,
	// and that the settle is kept; one the queue gives up on is reported
	// by Flush and Close.
	s.finishes.get(r.Deployment).post(&finishItem{id: r.ID, window: r.Window, actual: actual})
	if err := s.down("settle"); err != nil {
		var se *budget.StoreError
		if errors.As(err, &se) {
			se.Queued = true
		}
		return err
	}
	return nil
}

// Cancel is sent at once and waited for: the room it gives back may be
// what another caller is waiting for.
func (s *Driver) Cancel(ctx context.Context, r budget.Reservation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	it := &finishItem{id: r.ID, window: r.Window, cancel: true}
	if _, abandoned := s.finishes.get(r.Deployment).do(ctx, it); abandoned {
		return ctx.Err()
	}
	if it.err != nil {
		return storeError("cancel", it.err)
	}
	return nil
}

type finishItem struct {
	id     string
	window int64
	actual int64
	cancel bool
	err    error
}

// failed remembers when the store last failed to serve, so that calls
// that do not wait for it (Settle) can still report it is down.
func (s *Driver) failed(err error) {
	if err == nil {
		s.lastFail.Store(nil)
		return
	}
	s.lastFail.Store(&failure{at: time.Now(), err: err})
}

type failure struct {
	at  time.Time
	err error
}

// down returns a StoreError when the store failed within the last second.
func (s *Driver) down(op string) error {
	if f := s.lastFail.Load(); f != nil && time.Since(f.at) < time.Second {
		return &budget.StoreError{Op: op, Err: f.err}
	}
	return nil
}

// runFinishes sends one batch of settles and cancels on deployment.
func (s *Driver) runFinishes(deployment string) func(context.Context, []*finishItem) {
	tag := s.tag(deployment)
	return func(_ context.Context, items []*finishItem) {
		keys := []string{tag + ":w", tag + ":recs:0", tag + ":recs:1"}
		args := []any{string(s.policy)}
		for _, it := range items {
			cancel := "0"
			if it.cancel {
				cancel = "1"
			}
			args = append(args, it.id, it.window, it.actual, cancel)
		}
		// A settle is not waited for, so it can be waited out: sent again
		// (each id counts once, whatever is resent) while the server does
		// not answer, rather than left to hold its reservation until the
		// window ends. A cancel's caller may stop waiting; the batch goes
		// on.
		var err error
		_ = retryBusy(context.Background(), s.patience, func() error {
			ctx, stop := context.WithTimeout(context.Background(), 2*DefaultTimeout)
			defer stop()
			if err = finishScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
				return storeError("settle", err)
			}
			return nil
		})
		s.failed(err)
		for _, it := range items {
			it.err = err
			if err != nil && !it.cancel {
				s.lost.add(deployment, err) // a cancel's caller hears of it
			}
		}
	}
}

func (s *Driver) Absorb(ctx context.Context, deployment string, tokens, requests int64) error {
	err := absorbScript.Run(ctx, s.rdb, []string{s.tag(deployment) + ":w"}, s.window.Milliseconds(), tokens, requests).Err()
	return wrap(ctx, "absorb", err)
}

func (s *Driver) SetEffectiveLimit(ctx context.Context, deployment string, tokens int64, ttl time.Duration) error {
	return wrap(ctx, "set effective limit", s.rdb.Set(ctx, s.tag(deployment)+":eff", tokens, ttl).Err())
}

func (s *Driver) OpenBreaker(ctx context.Context, deployment string, d time.Duration) (time.Time, error) {
	v, err := breakerScript.Run(ctx, s.rdb, []string{s.tag(deployment) + ":open"}, d.Milliseconds()).Int64()
	if err != nil {
		return time.Time{}, wrap(ctx, "open breaker", err)
	}
	return time.UnixMilli(v), nil
}

// Usage runs the read script for every deployment in one pipeline: one
// round trip (one per node on a cluster).
func (s *Driver) Usage(ctx context.Context, deployments ...string) ([]budget.Usage, error) {
	if len(deployments) == 0 {
		return nil, nil
	}
	run := func(eval bool) ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(deployments))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, d := range deployments {
				tag := s.tag(d)
				keys := []string{tag + ":w", tag + ":eff", tag + ":open"}
				if eval {
					cmds[i] = usageScript.Eval(ctx, p, keys, s.window.Milliseconds())
				} else {
					cmds[i] = usageScript.EvalSha(ctx, p, keys, s.window.Milliseconds())
				}
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run(false)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// A pipelined EVALSHA cannot fall back to EVAL on its own: a node
		// lost its script cache (restart, SCRIPT FLUSH, a node added or
		// promoted since New). Load the scripts for the calls to come, and
		// send this one as EVAL, which needs no cache whichever node it
		// reaches.
		loadErr := s.load(ctx)
		if cmds, err = run(true); err != nil {
			err = errors.Join(err, loadErr)
		}
	}
	if err != nil {
		return nil, wrap(ctx, "usage", err)
	}
	out := make([]budget.Usage, len(deployments))
	for i, c := range cmds {
		v, err := c.Slice()
		if err != nil || len(v) < 9 {
			return nil, wrap(ctx, "usage", unexpectedReply(v, err))
		}
		u := budget.Usage{
			Deployment: deployments[i],
			Now:        time.UnixMilli(num(v[0])),
			Window:     num(v[1]),
			Reserved:   num(v[2]), Settled: num(v[3]), Used: num(v[4]),
			Requests1s: num(v[5]), Requests10s: num(v[6]),
			EffectiveLimit: num(v[7]),
		}
		if open := num(v[8]); open > 0 {
			u.OpenUntil = time.UnixMilli(open)
		}
		if len(v) >= 11 {
			u.Absorbed, u.Carried = num(v[9]), num(v[10])
		}
		out[i] = u
	}
	return out, nil
}

// Footprint counts the keys a deployment holds; zero once it has been idle
// for two windows.
func (s *Driver) Footprint(ctx context.Context, deployment string) (int, error) {
	tag := s.tag(deployment)
	var node redis.Cmdable = s.rdb
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		// The tag's keys all live on the master of its slot. A cluster
		// client would route SCAN by the hash tag in MATCH, which escaping
		// can change, or to any master when there is none.
		m, err := c.MasterForKey(ctx, tag)
		if err != nil {
			return 0, wrap(ctx, "scan", err)
		}
		node = m
	}
	n := 0
	iter := node.Scan(ctx, 0, globEscape(tag)+"*", 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, wrap(ctx, "scan", iter.Err())
}

// globEscape quotes what SCAN MATCH would read as a pattern in a prefix or
// deployment name.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// storeError reports a failed batch: anything but a definite answer from
// the server means the store did not serve.
func storeError(op string, err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		if !transient(re.Error()) {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
		err = busyReply{err}
	}
	return &budget.StoreError{Op: op, Err: err}
}

// busyReply is a server's reply that it cannot serve now: the store is
// there, and asking again later may succeed (budget.StoreError.Busy).
type busyReply struct{ error }

func (busyReply) Busy() bool      { return true }
func (b busyReply) Unwrap() error { return b.error }

// wrap turns errors that mean "the store is not there" into a
// *budget.StoreError; the end of the caller's own context is not the
// store's fault and passes through as it is.
// unexpectedReply is a reply of the wrong shape, and the error that said
// so, kept for errors.Is.
func unexpectedReply(v any, err error) error {
	if err != nil {
		return fmt.Errorf("unexpected reply %v: %w", v, err)
	}
	return fmt.Errorf("unexpected reply %v", v)
}

func wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("redisstore: %s: %w", op, ctx.Err())
	}
	return storeError(op, err)
}

// transient server replies mean the server cannot serve now.
func transient(msg string) bool {
	for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY", "NOREPLICAS"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// b2s is a flag as the scripts read it.
func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
