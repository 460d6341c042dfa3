package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
)

var _ budget.Census = (*Driver)(nil)

// The census's causes, in the order census429.lua returns them.
var causes = []budget.Cause{budget.CauseTokens, budget.CauseRequests, budget.CauseAdjustment, budget.CauseUnknown}

// agentsKey holds the fleet's agents, under a hash tag of its own.
func (s *Driver) agentsKey() string { return "{" + s.prefix + ":fleet}:agents" }

// tallyKey holds the fleet's totals, one hash field a key, under the
// fleet's hash tag.
func (s *Driver) tallyKey() string { return "{" + s.prefix + ":fleet}:tally" }

func (s *Driver) Checkin(ctx context.Context, agent string, ttl time.Duration) error {
	if agent == "" || ttl <= 0 {
		return errors.New("redisstore: a check-in needs an agent and a time to live")
	}
	err := censusAgentsScript.Run(ctx, s.rdb, []string{s.agentsKey()}, agent, ttl.Milliseconds()).Err()
	return wrap(ctx, "checkin", err)
}

func (s *Driver) Checkout(ctx context.Context, agent string) error {
	return wrap(ctx, "checkout", s.rdb.ZRem(ctx, s.agentsKey(), agent).Err())
}

func (s *Driver) Count429(ctx context.Context, deployment string, cause budget.Cause) error {
	if deployment == "" {
		return errors.New("redisstore: a 429 needs its deployment")
	}
	c := string(cause)
	known := false
	for _, x := range causes {
		known = known || x == cause
	}
	if !known {
		c = string(budget.CauseUnknown)
	}
	err := census429Script.Run(ctx, s.rdb, []string{s.tag(deployment) + ":429"}, s.window.Milliseconds(), c).Err()
	return wrap(ctx, "count 429", err)
}

// CountLostWrites adds n to the deployment's count of lost writes, a
// counter of its own beside its 429s, kept budget.LostWritesKept after
// the last added.
func (s *Driver) CountLostWrites(ctx context.Context, deployment string, n int64) error {
	if deployment == "" || n <= 0 {
		return errors.New("redisstore: lost writes need their deployment and a count above 0")
	}
	key := s.lostKey(deployment)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, key, n)
		p.PExpire(ctx, key, budget.LostWritesKept)
		return nil
	})
	return wrap(ctx, "count lost writes", err)
}

// CountPrompt adds to the deployment's prompt sums, a hash of two
// fields beside its 429s, kept budget.PromptKept after the last added.
func (s *Driver) CountPrompt(ctx context.Context, deployment string, prompt, cached int64) error {
	if deployment == "" || prompt < 0 || cached < 0 || cached > prompt {
		return errors.New("redisstore: prompt tokens need their deployment, and a cached part of at most the prompt")
	}
	key := s.promptKey(deployment)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, key, "prompt", prompt)
		p.HIncrBy(ctx, key, "cached", cached)
		p.PExpire(ctx, key, budget.PromptKept)
		return nil
	})
	return wrap(ctx, "count prompt", err)
}

// AddTally adds t's totals to the fleet's hash, kept budget.TallyKept
// after the last added. A total may count twice when an add is asked
// again after its answer was lost, as the census's other counts may.
func (s *Driver) AddTally(ctx context.Context, t budget.Tally) error {
	if err := t.Check(); err != nil {
		return err
	}
	if len(t) == 0 {
		return nil
	}
	key := s.tallyKey()
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for k, n := range t {
			p.HIncrBy(ctx, key, k.Field(), n)
		}
		p.PExpire(ctx, key, budget.TallyKept)
		return nil
	})
	return wrap(ctx, "add tally", err)
}

// ReadTally reads the fleet's totals; a field or a value that does not
// parse is an error, not a total dropped.
func (s *Driver) ReadTally(ctx context.Context) (budget.Tally, error) {
	vals, err := s.rdb.HGetAll(ctx, s.tallyKey()).Result()
	if err != nil {
		return nil, wrap(ctx, "read tally", err)
	}
	out := budget.Tally{}
	for f, v := range vals {
		k, err := budget.ParseTallyField(f)
		if err != nil {
			return nil, wrap(ctx, "read tally", err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, wrap(ctx, "read tally", fmt.Errorf("field %q: %w", f, unexpectedReply(v, err)))
		}
		out[k] = n
	}
	return out, nil
}

// promptKey holds a deployment's prompt sums, in its hash slot.
func (s *Driver) promptKey(deployment string) string { return s.tag(deployment) + ":prompt" }

// lostKey holds a deployment's count of lost writes, in its hash slot.
func (s *Driver) lostKey(deployment string) string { return s.tag(deployment) + ":lost" }

// Count reads the agents and every deployment's 429s in one pipeline (one
// round trip per node on a cluster).
func (s *Driver) Count(ctx context.Context, deployments ...string) (budget.Count, error) {
	var lost []*redis.StringCmd  // each deployment's lost writes
	var prompt []*redis.SliceCmd // and its prompt sums
	run := func(eval bool) (*redis.Cmd, []*redis.Cmd, error) {
		script := func(sc *redis.Script, p redis.Pipeliner, keys []string, args ...any) *redis.Cmd {
			if eval {
				return sc.Eval(ctx, p, keys, args...)
			}
			return sc.EvalSha(ctx, p, keys, args...)
		}
		var agents *redis.Cmd
		per := make([]*redis.Cmd, len(deployments))
		lost = make([]*redis.StringCmd, len(deployments))
		prompt = make([]*redis.SliceCmd, len(deployments))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			agents = script(censusAgentsScript, p, []string{s.agentsKey()}, "", 0)
			for i, d := range deployments {
				per[i] = script(census429Script, p, []string{s.tag(d) + ":429"}, s.window.Milliseconds(), "")
				lost[i] = p.Get(ctx, s.lostKey(d))
				prompt[i] = p.HMGet(ctx, s.promptKey(d), "prompt", "cached")
			}
			return nil
		})
		if errors.Is(err, redis.Nil) {
			// A deployment that lost no write: the error that counts is
			// a script's, if any (NOSCRIPT among them).
			err = agents.Err()
			for _, c := range per {
				err = cmp.Or(err, c.Err())
			}
		}
		return agents, per, err
	}
	agents, per, err := run(false)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		loadErr := s.load(ctx)
		if agents, per, err = run(true); err != nil {
			err = errors.Join(err, loadErr)
		}
	}
	if err != nil {
		return budget.Count{}, wrap(ctx, "count", err)
	}
	n, err := agents.Int64()
	if err != nil {
		return budget.Count{}, wrap(ctx, "count", err)
	}
	out := budget.Count{Agents: int(n), RateLimited: map[string]map[budget.Cause]int64{}, LostWrites: map[string]int64{}, Prompt: map[string]budget.PromptTokens{}}
	for i, d := range deployments {
		v, err := per[i].Int64Slice()
		if err != nil || len(v) != len(causes) {
			return budget.Count{}, wrap(ctx, "count", unexpectedReply(v, err))
		}
		m := map[budget.Cause]int64{}
		for j, c := range causes {
			m[c] = v[j]
		}
		out.RateLimited[d] = m
		switch l, err := lost[i].Int64(); {
		case err == nil:
			out.LostWrites[d] = l
		case !errors.Is(err, redis.Nil):
			return budget.Count{}, wrap(ctx, "count", err)
		}
		pt, err := promptOf(prompt[i])
		if err != nil {
			return budget.Count{}, wrap(ctx, "count", err)
		}
		if pt.Prompt > 0 {
			out.Prompt[d] = pt
		}
	}
	return out, nil
}

// promptOf reads a deployment's prompt sums; none is zero.
func promptOf(c *redis.SliceCmd) (budget.PromptTokens, error) {
	vals, err := c.Result()
	if err != nil || len(vals) != 2 {
		return budget.PromptTokens{}, unexpectedReply(vals, err)
	}
	var n [2]int64
	for i, v := range vals {
		if v == nil {
			continue
		}
		s, ok := v.(string)
		x, perr := strconv.ParseInt(s, 10, 64)
		if !ok || perr != nil {
			return budget.PromptTokens{}, unexpectedReply(vals, perr)
		}
		n[i] = x
	}
	return budget.PromptTokens{Prompt: n[0], Cached: n[1]}, nil
}
