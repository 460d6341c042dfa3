package metrics

import (
	"context"
	"errors"
	"sync"

	"github.com/headroom-agent/headroom/budget"
)

// An Exporter is the fleet's one scrape target: it reads the shared store
// a config names (Fleet's view) and makes no calls of its own. It opens
// the store when it is first read, and again at each read after one that
// could not reach it, so a store that is down when the exporter starts,
// or goes away later, is a scrape with headroom_store_up 0, not a process
// to restart.
type Exporter struct {
	cfg *budget.Config

	mu     sync.Mutex
	store  *budget.Store
	router *budget.Router
}

// NewExporter exports the fleet of cfg, a validated config.
func NewExporter(cfg *budget.Config) *Exporter { return &Exporter{cfg: cfg} }

// Open opens the store now, if it is not open yet: a config whose store
// cannot be opened says so at the start. An error wrapping
// budget.ErrUnavailable is a store not answering; the exporter may serve
// anyway, and opens it at a later read.
func (e *Exporter) Open(ctx context.Context) error {
	_, err := e.open(ctx)
	return err
}

func (e *Exporter) open(ctx context.Context) (*budget.Router, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.router != nil {
		return e.router, nil
	}
	s, err := budget.OpenStore(ctx, e.cfg)
	if err != nil {
		return nil, err
	}
	r, err := budget.NewRouter(s, e.cfg, budget.RouterOptions{})
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	e.store, e.router = s, r
	return r, nil
}

// Source reads the fleet's view, opening the store first if need be.
func (e *Exporter) Source() Source {
	return func(ctx context.Context) (View, error) {
		r, err := e.open(ctx)
		if err != nil {
			return View{Dashboard: budget.Dashboard{Agents: -1}}, err
		}
		return Fleet(r)(ctx)
	}
}

// Close closes the store, if open.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.store == nil {
		return nil
	}
	err := e.store.Close()
	e.store, e.router = nil, nil
	return err
}
