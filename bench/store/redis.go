package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/plural"
)

// Options are what MeasureRedis drives.
type Options struct {
	Clients  []int         // one row per count
	Duration time.Duration // how long each row runs
	// Window is the store's token window: a short one keeps the
	// reservation records' lifetimes short.
	Window   time.Duration
	Progress io.Writer // told as each row starts; nil for none
}

// ErrNothingReserved is a row in which no reservation succeeded: the
// store did not answer.
var ErrNothingReserved = errors.New("no reservation succeeded")

// MeasureRedis runs one row per client count against the Redis at
// redisURL, each from a pool of that many connections and on a store of
// its own there (a fresh key prefix). It stops at the first row that
// fails, with the rows before it.
func MeasureRedis(ctx context.Context, redisURL string, o Options) ([]Row, error) {
	var rows []Row
	for _, n := range o.Clients {
		row, err := redisRow(ctx, redisURL, n, o)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func redisRow(ctx context.Context, redisURL string, clients int, o Options) (Row, error) {
	rdb, err := redisstore.Dial(redisURL, clients)
	if err != nil {
		return Row{}, err
	}
	s, err := redisstore.New(ctx, redisstore.Options{Client: rdb, Prefix: "bench:" + budget.NewID(), Window: o.Window})
	if err != nil {
		rdb.Close()
		return Row{}, err
	}
	defer s.Close()
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "headroom bench store: %s for %v…\n", plural.Of(clients, "client"), o.Duration)
	}
	row := Run(ctx, s, clients, o.Duration)
	if row.Reservations == 0 {
		return Row{}, fmt.Errorf("%w at %s (%s): is Redis at %s?", ErrNothingReserved, plural.Of(clients, "client"), plural.Of(row.Errors, "error"), redisstore.Redact(redisURL))
	}
	return row, nil
}

// RedisScriptCeiling is RedisCeiling for the store's own reservation
// script, its keys and arguments laid out as a store at redisURL lays
// them out, from 64 connections.
func RedisScriptCeiling(ctx context.Context, redisURL string, window time.Duration) (Ceiling, error) {
	rdb, err := redisstore.Dial(redisURL, 1)
	if err != nil {
		return Ceiling{}, err
	}
	s, err := redisstore.NewDriver(ctx, redisstore.Options{Client: rdb, Prefix: "bench:" + budget.NewID(), Window: window})
	if err != nil {
		return Ceiling{}, err
	}
	defer s.Close()
	sha, keys, args := s.ReserveCall("__rand_int__", "bench", budget.Cost{Tokens: 200}, limits)
	return RedisCeiling(ctx, redisURL, sha, keys, args, 64, 200000)
}
