package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redact"
)

// PingTimeout bounds Ping for a server that does not answer; one that
// refuses the connection (nothing listens) is known at once. It is seconds,
// not the store's DefaultTimeout, so that a server busy with a fleet, or
// a machine busy starting one, is waited on rather than called down.
const PingTimeout = 5 * time.Second

// StartHint says how to start a Redis on this machine, for messages.
const StartHint = "start one with `redis-server --port 6379` or `docker run -p 6379:6379 redis`"

// Ping checks that a Redis answers at rawURL: for a command that needs
// one, before it starts anything that would wait on it. It asks again
// while the server is slow to answer, up to PingTimeout. When none
// answers, the error wraps budget.ErrUnavailable and names the URL
// (without its password) and how to start one. A URL that cannot be read,
// or a server that refuses the client (a wrong password), is an error of
// another kind: the store is there, the URL is wrong.
func Ping(ctx context.Context, rawURL string) error {
	rdb, err := Dial(rawURL, 1)
	if err != nil {
		return err
	}
	defer rdb.Close()
	_ = retryBusy(ctx, PingTimeout, func() error {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err = rdb.Ping(actx).Err(); err != nil {
			return storeError("ping", err)
		}
		return nil
	})
	err = wrap(ctx, "ping", err)
	if se := (*budget.StoreError)(nil); errors.As(err, &se) {
		return &budget.StoreError{Op: "ping", Err: fmt.Errorf("no Redis answers at %s (%w): %s", redact.URL(rawURL), se.Err, StartHint)}
	}
	if err != nil {
		return fmt.Errorf("redis at %s: %w", redact.URL(rawURL), err)
	}
	return nil
}
