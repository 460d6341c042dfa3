package redisstore

import (
	"context"
	"fmt"

	"github.com/headroom-agent/headroom/budget"
)

// Importing the package registers it for redis:// and rediss:// URLs, and
// redis+cluster:// and rediss+cluster:// for a Redis Cluster by one seed
// node, so budget.OpenStore (and llm.Open) can open the store a config
// names.
func init() {
	for _, scheme := range []string{"redis", "rediss", "redis+cluster", "rediss+cluster"} {
		budget.RegisterStore(scheme, open)
	}
}

func open(ctx context.Context, url string, o budget.StoreOptions) (budget.Driver, error) {
	rdb, err := Dial(url, 0)
	if err != nil {
		return nil, err
	}
	s, err := NewDriver(ctx, Options{Client: rdb, Window: o.Window, Policy: o.Policy, Prefix: o.Prefix})
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("budget store at %s: %w", Redact(url), err)
	}
	return s, nil
}
