package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/llm"
)

// Strategies, in the order they are compared by default.
var Strategies = []string{"round-robin", "least-absolute-tokens", "reactive-only", "headroom"}

// Known is every strategy: the defaults, and headroom-fixed, headroom with
// its model as configured and nothing learned (a 15% margin, a 5 ms
// pacing allowance), to compare the learned model against.
var Known = append(slices.Clone(Strategies), "headroom-fixed")

// WorkerSpec is what one worker process runs.
type WorkerSpec struct {
	Strategy    string       `json:"strategy"`
	Endpoint    string       `json:"endpoint"`
	Deployments []Deployment `json:"deployments"`
	Agents      int          `json:"agents"`
	StartMS     int64        `json:"start_ms"` // all agents start then
	EndMS       int64        `json:"end_ms"`   // no call starts after
	Redis       string       `json:"redis"`
	Prefix      string       `json:"prefix"`
	Window      string       `json:"window"`
	Margin      float64      `json:"margin"`
	Seed        uint64       `json:"seed"`
}

// Deployment is one deployment of the fleet's target.
type Deployment struct {
	Name string `json:"name"`
	TPM  int64  `json:"tpm"`
}

// WorkerResult is what a worker saw from its side.
type WorkerResult struct {
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Shed      int64 `json:"shed"`
}

// baseline attempts: the SDK default of two retries.
const baselineAttempts = 3

// RunWorker runs spec's agents until its end time.
func RunWorker(ctx context.Context, spec WorkerSpec) (WorkerResult, error) {
	window, err := time.ParseDuration(spec.Window)
	if err != nil {
		return WorkerResult{}, fmt.Errorf("window %q: %w", spec.Window, err)
	}
	rdb, err := redisstore.Dial(spec.Redis, spec.Agents)
	if err != nil {
		return WorkerResult{}, err
	}
	defer rdb.Close()
	store, err := redisstore.New(ctx, redisstore.Options{Client: rdb, Prefix: spec.Prefix, Window: window})
	if err != nil {
		return WorkerResult{}, err
	}
	defer store.Close()

	mix, err := agentKinds()
	if err != nil {
		return WorkerResult{}, err
	}
	var call func(ctx context.Context, rng *rand.Rand, k kind) error
	switch spec.Strategy {
	case "headroom", "headroom-fixed":
		call, err = headroomCaller(store, spec, window)
	case "round-robin", "least-absolute-tokens", "reactive-only":
		call, err = baselineCaller(rdb, store, spec, window)
	default:
		err = fmt.Errorf("unknown strategy %q (have %v)", spec.Strategy, Known)
	}
	if err != nil {
		return WorkerResult{}, err
	}

	var res WorkerResult
	end := time.UnixMilli(spec.EndMS)
	time.Sleep(time.Until(time.UnixMilli(spec.StartMS)))
	var wg sync.WaitGroup
	for a := range spec.Agents {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(spec.Seed, uint64(a)))
			for time.Now().Before(end) && ctx.Err() == nil {
				callCtx, cancel := context.WithDeadline(ctx, end)
				err := call(callCtx, rng, mix.pick(rng))
				cancel()
				switch {
				case errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(end):
					// Cut by the end of the run, in flight or in a
					// retry's wait: neither served nor failed.
					continue
				case err == nil:
					atomic.AddInt64(&res.Completed, 1)
				case errors.Is(err, budget.ErrShed):
					atomic.AddInt64(&res.Shed, 1)
				default:
					atomic.AddInt64(&res.Failed, 1)
				}
				// The agent acts on the page between calls.
				time.Sleep(time.Duration(50+rng.IntN(100)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	return res, nil
}

// headroomCaller places every call through the router.
func headroomCaller(store *budget.Store, spec WorkerSpec, window time.Duration) (func(context.Context, *rand.Rand, kind) error, error) {
	cfg := &budget.Config{Margin: spec.Margin, Window: window}
	for _, d := range spec.Deployments {
		cfg.Deployments = append(cfg.Deployments, budget.Deployment{
			Name: d.Name, Endpoint: spec.Endpoint, Model: "gpt-4o", TPM: d.TPM,
			Auth: budget.Auth{APIKeyEnv: "HEADROOM_FLEET_KEY"},
		})
	}
	if _, err := cfg.Validate(); err != nil {
		return nil, err
	}
	router, err := budget.NewRouter(store, cfg, budget.RouterOptions{Fixed: spec.Strategy == "headroom-fixed"})
	if err != nil {
		return nil, err
	}
	disp, err := llm.NewDispatcher(router, cfg, llm.DispatcherOptions{})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _ *rand.Rand, k kind) error {
		_, _, err := disp.Chat(ctx, budget.Call{Tokens: k.cost}, k.params())
		return err
	}, nil
}

// baselineCaller sends calls as the common strategies do: pick a
// deployment, send, and on a 429 wait its Retry-After and pick again.
func baselineCaller(rdb redis.UniversalClient, store *budget.Store, spec WorkerSpec, window time.Duration) (func(context.Context, *rand.Rand, kind) error, error) {
	client := openai.NewClient(
		azure.WithEndpoint(spec.Endpoint, budget.DefaultAPIVersion),
		azure.WithAPIKey("fleet"),
		azure.WithUnsafeAllowHTTP(),
		option.WithMaxRetries(0),
	)
	var next atomic.Uint64
	names := make([]string, len(spec.Deployments))
	for i, d := range spec.Deployments {
		names[i] = d.Name
	}
	choose := func(ctx context.Context, rng *rand.Rand) (string, error) {
		switch spec.Strategy {
		case "round-robin":
			return names[next.Add(1)%uint64(len(names))], nil
		case "least-absolute-tokens":
			// The fewest tokens used this window, counted after each call
			// in a shared hash.
			used, err := rdb.HGetAll(ctx, latKey(spec.Prefix, window)).Result()
			if err != nil {
				return "", err
			}
			best, bestN := "", int64(-1)
			for _, i := range rng.Perm(len(names)) {
				n, _ := strconv.ParseInt(used[names[i]], 10, 64)
				if bestN < 0 || n < bestN {
					best, bestN = names[i], n
				}
			}
			return best, nil
		default: // reactive-only: any deployment whose shared breaker is closed
			us, err := store.Usage(ctx, names...)
			if err != nil {
				return "", err
			}
			var open []string
			for _, u := range us {
				if !u.OpenUntil.After(u.Now) {
					open = append(open, u.Deployment)
				}
			}
			if len(open) == 0 {
				return names[rng.IntN(len(names))], nil
			}
			return open[rng.IntN(len(open))], nil
		}
	}
	return func(ctx context.Context, rng *rand.Rand, k kind) error {
		for a := 0; a < baselineAttempts; a++ {
			dep, err := choose(ctx, rng)
			if err != nil {
				return err
			}
			p := k.params()
			p.Model = dep
			var raw *http.Response
			out, err := client.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw))
			if err == nil {
				if spec.Strategy == "least-absolute-tokens" {
					key := latKey(spec.Prefix, window)
					rdb.HIncrBy(ctx, key, dep, out.Usage.TotalTokens)
					rdb.Expire(ctx, key, 2*window)
				}
				return nil
			}
			if raw == nil || raw.StatusCode != http.StatusTooManyRequests {
				return err
			}
			wait := budget.RetryAfter(raw.Header, time.Now())
			if spec.Strategy == "reactive-only" {
				_, _ = store.OpenBreaker(ctx, dep, max(wait, time.Second))
			}
			t := time.NewTimer(max(wait, 10*time.Millisecond))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		return errors.New("gave up after 429s")
	}, nil
}

// latKey is the window's shared usage hash, keyed by the local clock as
// such baselines do.
func latKey(prefix string, window time.Duration) string {
	return fmt.Sprintf("{%s}:lat:%d", prefix, time.Now().UnixNano()/int64(window))
}
