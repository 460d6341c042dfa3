package learn

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/agent/learned/learnedredis"
)

// FleetOptions shape a fleet row.
type FleetOptions struct {
	Options
	Agents   int    // 50 when 0
	Parallel int    // browsers at once; 8 when 0
	Redis    string // the store the fleet shares, redis://…
	Stagger  time.Duration
}

// FleetRow is a fleet on one template: with learning on, and off.
type FleetRow struct {
	Agents    int   `json:"agents"`
	Learning  bool  `json:"learning"`
	Succeeded int   `json:"succeeded"`
	Asked     int   `json:"asked"` // agents that made a step call
	Tokens    int64 `json:"tokens"`
	Summary   int   `json:"summary_calls"`
	// AllTokens is every call's reservation, summaries included.
	AllTokens int64 `json:"all_tokens"`
	WallMS    int64 `json:"wall_ms"`
	WaitedMS  int64 `json:"waited_ms"` // summed over agents
	// Why says, for each agent that asked with learning on, why it did
	// not follow the learned run ("lead" for the agent that learned it).
	Why []string `json:"why,omitempty"`
}

// MeasureFleet starts Agents agents on the shop's task, each its own row
// (product), sharing one Redis as containers would (each agent its own
// client), with learning on; then the same fleet with learning off.
func MeasureFleet(ctx context.Context, o FleetOptions) ([]FleetRow, error) {
	if o.Agents <= 0 {
		o.Agents = 50
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	site := NewSite()
	defer site.Close()
	task, err := agent.ParseTask("add-to-cart.yaml", []byte(site.Task()))
	if err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("headroom:bench-learn:%d:", time.Now().UnixNano())
	var rows []FleetRow
	for _, on := range []bool{true, false} {
		row, err := fleet(ctx, task, o, on, prefix)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func fleet(ctx context.Context, task *agent.Task, o FleetOptions, on bool, prefix string) (FleetRow, error) {
	row := FleetRow{Agents: o.Agents, Learning: on}
	ro, err := redis.ParseURL(o.Redis)
	if err != nil {
		return row, fmt.Errorf("bench learn: --redis: %w", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, o.Parallel)
	began := time.Now()
	for i := range o.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * o.Stagger)
			slots <- struct{}{}
			defer func() { <-slots }()
			var lib *learned.Library
			if on {
				// Each agent its own client, as each container has.
				c := redis.NewClient(ro)
				defer c.Close()
				lib = learned.NewLibrary(learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: prefix, TTL: 10 * time.Minute}), learned.Options{})
				defer lib.Close()
			}
			r := runOnce(ctx, task, lib, map[string]string{"product": Products[i%len(Products)]}, o.Options, fmt.Sprintf("fleet agent %d", i))
			mu.Lock()
			defer mu.Unlock()
			if r.Status == string(agent.Succeeded) {
				row.Succeeded++
			}
			if r.Calls > 0 {
				row.Asked++
				if on {
					row.Why = append(row.Why, why(r))
				}
			}
			row.Tokens += r.Tokens
			row.Summary += r.Summary
			row.AllTokens += r.Tokens + r.SummaryTokens
			row.WaitedMS += r.WaitedMS
		}()
	}
	wg.Wait()
	row.WallMS = time.Since(began).Milliseconds()
	return row, ctx.Err()
}

// why is why an agent that asked did so: it learned the run, or it met
// a miss, or it stopped (its status).
func why(r Run) string {
	switch {
	case r.Stored == agent.StoredLearned:
		return "lead"
	case r.Miss != "":
		return fmt.Sprintf("%s: %s (%s, waited %d ms)", r.Miss, r.MissDetail, r.Status, r.WaitedMS)
	}
	return fmt.Sprintf("%s, stored %q, waited %d ms", r.Status, r.Stored, r.WaitedMS)
}
