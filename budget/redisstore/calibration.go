package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/learning"
)

var _ budget.Calibrator = (*Driver)(nil)

// calKey holds a deployment's calibration as JSON, beside its windows.
func (s *Driver) calKey(deployment string) string { return s.tag(deployment) + ":cal" }

// calibrationTTL forgets what was learned of a deployment nobody has
// called for this many windows: the model falls back to its cautious
// start rather than trust old readings.
const calibrationTTL = 60

// UpdateCalibration reads, applies f and writes under WATCH, retrying when
// another process wrote in between. The rules stay in Go, in one place,
// for both drivers; a calibration is written about once a second per
// process, so conflicts are rare, and a collision backs off at random.
// The retries are bounded by time, not by count: on a loaded machine a
// writer can lose many rounds in a row, and its reading is still worth
// keeping for a while.
func (s *Driver) UpdateCalibration(ctx context.Context, deployment string, f func(learning.Calibration) learning.Calibration) (learning.Calibration, error) {
	if deployment == "" {
		return learning.Calibration{}, errors.New("redisstore: a calibration needs its deployment")
	}
	key := s.calKey(deployment)
	var out learning.Calibration
	give := time.Now().Add(calibrationPatience)
	for try := 0; ; try++ {
		if try > 0 {
			if time.Now().After(give) {
				return learning.Calibration{}, wrap(ctx, "calibrate", errors.New("too many writers at once; the reading is dropped"))
			}
			if err := backOff(ctx, try); err != nil {
				return learning.Calibration{}, wrap(ctx, "calibrate", err)
			}
		}
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			c, err := readCalibration(tx.Get(ctx, key))
			if err != nil {
				return err
			}
			out = f(c)
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, key, b, calibrationTTL*s.window)
				return nil
			})
			return err
		}, key)
		if !errors.Is(err, redis.TxFailedErr) {
			return out, wrap(ctx, "calibrate", err)
		}
	}
}

// calibrationPatience is how long a writer keeps trying after collisions:
// about two of the intervals at which a process writes its calibration.
const calibrationPatience = 2 * time.Second

// backOff sleeps a random part of a wait that grows with the try (to
// 16 ms), so writers that collided do not collide again.
func backOff(ctx context.Context, try int) error {
	t := time.NewTimer(time.Duration(rand.Int64N(int64(min(try, 16)) * int64(time.Millisecond))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Calibrations reads every deployment's calibration in one pipeline.
func (s *Driver) Calibrations(ctx context.Context, deployments ...string) ([]learning.Calibration, error) {
	cmds := make([]*redis.StringCmd, len(deployments))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range deployments {
			cmds[i] = p.Get(ctx, s.calKey(d))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap(ctx, "calibrations", err)
	}
	out := make([]learning.Calibration, len(deployments))
	for i, c := range cmds {
		if out[i], err = readCalibration(c); err != nil {
			return nil, wrap(ctx, "calibrations", err)
		}
	}
	return out, nil
}

// readCalibration decodes a stored calibration; a missing key is the zero
// one, and so is one that no longer decodes (a newer or older layout):
// the model starts over rather than fail calls.
func readCalibration(c *redis.StringCmd) (learning.Calibration, error) {
	b, err := c.Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return learning.Calibration{}, nil
	case err != nil:
		return learning.Calibration{}, err
	}
	var cal learning.Calibration
	if json.Unmarshal(b, &cal) != nil {
		return learning.Calibration{}, nil
	}
	return cal, nil
}
