package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// Options shape the Caller that Open builds. The zero value works: the
// built-in types, failing truncated answers, no cassette.
type Options struct {
	// Types is the registry to call through; default calltypes.Default().
	// The config's overrides are applied to it.
	Types      *calltypes.Registry
	Truncation Truncation
	// Record appends every exchange to this cassette file; with Replay,
	// what the replay answers (a copy of it, byte for byte).
	Record string
	// Replay answers every call from this cassette file: no budget is
	// opened and nothing goes out.
	Replay     string
	Dispatcher DispatcherOptions
	Router     budget.RouterOptions
}

// Open builds the Caller a config describes: its call-type overrides
// applied, a router over its deployments counting in its store (the
// shared Redis one when it names one, through the driver
// budget/redisstore registers; else in memory), a dispatcher holding the
// deployments' keys, and the cassette o asks for. Close the Caller when
// done. Every problem with the config is an error naming its file, line
// and field.
func Open(ctx context.Context, f *config.File, o Options) (*Caller, error) {
	if f == nil {
		return nil, errors.New("llm: no config: pass one, or open the embedded default (llm/embedded)")
	}
	if o.Record != "" && o.Replay != "" && safefile.Same(o.Record, o.Replay) {
		return nil, fmt.Errorf("llm: %s is both the cassette replayed and the one recorded: recording again writes a copy, so name another file", o.Replay)
	}
	c := &Caller{Types: o.Types, Truncation: o.Truncation}
	if c.Types == nil {
		c.Types = calltypes.Default()
	}
	if err := f.Apply(c.Types); err != nil {
		return nil, err
	}
	if err := c.shapesFrom(f); err != nil {
		return nil, err
	}
	c.ClassTiers = f.ServiceTiers
	if o.Replay != "" {
		if err := c.replayFrom(o.Replay, keys(f, o.Dispatcher.Getenv)); err != nil {
			return nil, err
		}
		// No model answers a replay: what was recorded does.
		c.StandIn = "the calls recorded in " + filepath.Base(o.Replay)
		if o.Record != "" {
			// What the replay answers is recorded again, byte for byte.
			fh, err := safefile.OpenAppend(o.Record, 0o600)
			if err != nil {
				return nil, fmt.Errorf("llm: record: %w", err)
			}
			c.OnClose(fh.Close)
			c.Cassette.RecordTo(fh)
		}
		return c, nil
	}
	// Validate fills defaults in place: on a copy, so that callers opened
	// at once from one file (agents in one process) share nothing it
	// writes, and nothing their routers read while another opens.
	fc := *f
	fc.Budget.Deployments = slices.Clone(f.Budget.Deployments)
	f = &fc
	cfg := &f.Budget
	if _, err := cfg.Validate(); err != nil { // a check for a config built in code; for a file Parse checked, the same values again
		return nil, fmt.Errorf("llm: config: %w", err)
	}
	store, err := budget.OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c.OnClose(store.Close)
	router, err := budget.NewRouter(store, cfg, o.Router)
	if err == nil {
		c.Dispatcher, err = NewDispatcher(router, cfg, o.Dispatcher)
	}
	if err == nil && o.Record != "" {
		err = c.recordTo(o.Record)
	}
	if census, ok := store.Census(); ok && err == nil {
		quota := map[string]string{}
		for _, d := range cfg.Deployments {
			quota[d.Name] = d.QuotaKey
		}
		c.OnClose(checkIn(census, func(ctx context.Context) {
			c.prompts.tell(ctx, census, quota)
			c.fleet.tell(ctx, census, c.Tally())
		}))
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close releases what Open started for the caller: the budget store, the
// cassette's file. A Caller built by hand has nothing to close.
func (c *Caller) Close() error {
	c.mu.Lock()
	fs := c.closed
	c.closed = nil
	c.mu.Unlock()
	var errs []error
	for i := len(fs) - 1; i >= 0; i-- {
		errs = append(errs, fs[i]())
	}
	return errors.Join(errs...)
}

// OnClose adds f to what Close runs (last added, first run): a package
// that opens a Caller on something it started stops it there.
func (c *Caller) OnClose(f func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = append(c.closed, f)
}

// replayFrom answers the caller's calls from a cassette file; secrets are
// scrubbed from live requests as they were from the recorded ones.
func (c *Caller) replayFrom(path string, secrets []string) error {
	// A regular file only: a FIFO named as a cassette would never end.
	data, err := safefile.ReadFile(path, maxCassette, "cassette")
	if err != nil {
		return fmt.Errorf("llm: replay: %w", err)
	}
	c.Cassette, err = LoadCassette(bytes.NewReader(data), path, secrets...)
	return err
}

// keys reads the keys the config's deployments name, as the dispatcher
// would, for a replay to scrub: a request that held one was recorded with
// it replaced. Unset variables are skipped (a replay needs no key).
func keys(f *config.File, getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	for _, d := range f.Budget.Deployments {
		if d.Auth.APIKeyEnv != "" {
			if k := getenv(d.Auth.APIKeyEnv); k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}

// recordTo appends the caller's exchanges to a cassette file, scrubbed of
// the dispatcher's keys.
func (c *Caller) recordTo(path string) error {
	fh, err := safefile.OpenAppend(path, 0o600) // a regular file, never a device or a link out
	if err != nil {
		return fmt.Errorf("llm: record: %w", err)
	}
	c.OnClose(fh.Close)
	c.Cassette = NewCassette(fh, c.Dispatcher.Secrets()...)
	return nil
}

// shapesFrom sets the caller's request shapes from the config: the
// default pool's, and every pool's for a fallback to name; and the
// fallback itself.
func (c *Caller) shapesFrom(f *config.File) error {
	c.Fallback.Shapes = map[string]Shape{}
	for name, ds := range f.Budget.Pools() {
		info, err := models.Resolve(ds[0].Model, ds[0].Family)
		if err != nil {
			return fmt.Errorf("llm: deployment %s: %w", ds[0].Name, err)
		}
		s := Shape{Model: info, ModelName: ds[0].Model, Allowance: f.ReasoningTokens}
		for _, d := range ds {
			s.ImageAdmission = max(s.ImageAdmission, d.ImageAdmission)
		}
		c.Fallback.Shapes[name] = s
	}
	// Calls go to the default pool: a pool is one model, so one shape.
	c.Shape = c.Fallback.Shapes[budget.DefaultPool]
	c.Shape.Allowance = f.ReasoningTokens
	c.Fallback.Share = config.DefaultShare // a type's own fallback is kept warm too
	if f.Fallback != nil {
		c.Fallback.Pool, c.Fallback.Share = f.Fallback.Pool, f.Fallback.ShareOrDefault()
	}
	return nil
}

// checkIn keeps this caller counted among the fleet's agents in the store's
// census until the returned func is called, which checks it out; each
// check-in, and the last, also tells it what tell does.
func checkIn(census budget.Census, tell func(context.Context)) func() error {
	id := budget.NewID()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(budget.CheckinEvery)
		defer t.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = census.Checkin(ctx, id, budget.CheckinTTL)
			tell(ctx)
			cancel()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() error {
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		tell(ctx)
		return census.Checkout(ctx, id)
	}
}
