package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// Budget is a router over a config's deployments and the store it counts
// in, with what it holds open.
type Budget struct {
	Router     *budget.Router
	Store      budget.Store
	Dispatcher *Dispatcher
	close      []func()
}

// Close releases the store and anything started for the budget.
func (b *Budget) Close() {
	for i := len(b.close) - 1; i >= 0; i-- {
		b.close[i]()
	}
}

// OpenBudget builds the budget cfg describes: the Redis store when it names
// one (shared with the fleet), else the in-memory one.
func OpenBudget(ctx context.Context, cfg *budget.Config, o DispatcherOptions) (*Budget, error) {
	b := &Budget{}
	if cfg.Redis != "" {
		rdb, err := redisstore.Dial(cfg.Redis, 0)
		if err != nil {
			return nil, err
		}
		s, err := redisstore.New(ctx, redisstore.Options{Client: rdb, Window: cfg.Window, Policy: cfg.Refund})
		if err != nil {
			rdb.Close()
			return nil, fmt.Errorf("budget store at %s: %w", redisstore.Redact(cfg.Redis), err)
		}
		b.Store = s
	} else {
		b.Store = budget.NewMemStore(budget.MemOptions{Window: cfg.Window, Policy: cfg.Refund})
	}
	b.close = append(b.close, func() { b.Store.Close() })
	var err error
	if b.Router, err = budget.NewRouter(b.Store, cfg, budget.RouterOptions{}); err != nil {
		b.Close()
		return nil, err
	}
	if b.Dispatcher, err = NewDispatcher(b.Router, cfg, o); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// EmbeddedDeployment is the deployment the embedded default serves.
const EmbeddedDeployment = "gpt-4o-mini"

// OpenEmbedded is the default when there is no config: the Azure OpenAI
// simulator in this process, on a loopback port, answering with its
// heuristic stand-in for a model; the in-memory budget; one process. It
// needs no network and no key.
func OpenEmbedded(ctx context.Context) (*Budget, error) {
	return OpenEmbeddedModel(ctx, heuristic.Model{})
}

// OpenEmbeddedModel is OpenEmbedded with m answering the calls: how a new
// call type is tried offline before a real deployment sees it.
func OpenEmbeddedModel(ctx context.Context, m azuresim.Model) (*Budget, error) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{
		Name: EmbeddedDeployment, Model: "gpt-4o-mini", ModelVersion: "2024-07-18",
		TPM: 200000, Reply: "embedded",
	}}}, azuresim.Options{Models: map[string]azuresim.Model{"embedded": m}})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	cfg := &budget.Config{Deployments: []budget.Deployment{{
		Name: EmbeddedDeployment, Endpoint: "http://" + ln.Addr().String(), Model: "gpt-4o-mini",
		ModelVersion: "2024-07-18", TPM: 200000, Auth: budget.Auth{APIKeyEnv: "HEADROOM_EMBEDDED_KEY"},
	}}}
	if _, err := cfg.Validate(); err != nil {
		srv.Close()
		return nil, err
	}
	b, err := OpenBudget(ctx, cfg, DispatcherOptions{Getenv: func(string) string { return "embedded" }})
	if err != nil {
		srv.Close()
		return nil, err
	}
	b.close = append([]func(){func() { srv.Close() }}, b.close...)
	return b, nil
}
