package redisstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// The fleet test's shape: a 1.2 s window makes the request windows 20 ms
// and 200 ms, so a few seconds cover many of each.
var (
	fleetWindow = 1200 * time.Millisecond
	fleetLimits = budget.Limits{Tokens: 20000, Requests: 600, Margin: 0.85} // 10 per 20 ms, 100 per 200 ms
)

type admitted struct {
	W, W1, W10, Tokens int64
}

// TestMain lets the test binary act as one process of a fleet.
func TestMain(m *testing.M) {
	if os.Getenv("HEADROOM_FLEET_WORKER") != "" {
		os.Exit(fleetWorker())
	}
	// redis-cli takes seconds to create a cluster; the single-server tests
	// run meanwhile.
	redistest.PrestartCluster()
	os.Exit(m.Run())
}

// fleetWorker reserves random costs from many goroutines until its time is
// up, printing each admitted reservation as a JSON line.
func fleetWorker() int {
	url, prefix := os.Getenv("HEADROOM_FLEET_REDIS"), os.Getenv("HEADROOM_FLEET_PREFIX")
	goroutines, _ := strconv.Atoi(os.Getenv("HEADROOM_FLEET_GOROUTINES"))
	until, _ := strconv.ParseInt(os.Getenv("HEADROOM_FLEET_UNTIL"), 10, 64)
	rdb, err := Dial(url, goroutines)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := New(context.Background(), Options{Client: rdb, Prefix: prefix, Window: fleetWindow})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := false
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(g)))
			for time.Now().UnixMilli() < until {
				// As the router does: a reservation the server did not answer
				// in time (a loaded machine) is asked again with its id, which
				// must not charge twice; the windows' totals would show it.
				id, cost := budget.NewID(), budget.Cost{Tokens: 1 + rng.Int64N(100)}
				var r budget.Reservation
				var err error
				var ref *budget.Refusal
				for try := range 4 {
					if try > 0 {
						time.Sleep(time.Duration(25<<try) * time.Millisecond)
					}
					if r, err = s.Reserve(context.Background(), id, "shared", cost, fleetLimits); err == nil || errors.As(err, &ref) {
						break
					}
				}
				switch {
				case errors.As(err, &ref):
					time.Sleep(min(ref.Wait, 20*time.Millisecond))
					continue
				case err != nil:
					fmt.Fprintln(os.Stderr, "reserve:", err)
					mu.Lock()
					failed = true
					mu.Unlock()
					return
				}
				line, _ := json.Marshal(admitted{r.Window, r.Window1s, r.Window10s, r.Tokens})
				mu.Lock()
				out.Write(append(line, '\n'))
				mu.Unlock()
				_ = s.Settle(context.Background(), r, r.Tokens/2)
			}
		})
	}
	wg.Wait()
	out.Flush()
	if failed {
		return 1
	}
	return 0
}

// Several OS processes × many goroutines on one deployment: per window, what
// was admitted never exceeds the token cap or either request limit.
func TestFleetOfProcessesNeverOverspends(t *testing.T) {
	url := redistest.URL(t)
	t.Parallel() // with the cluster's fleet: both mostly wait on Redis
	hammer(t, url)
}

// hammer runs the fleet on the Redis at url and checks what it admitted.
func hammer(t *testing.T, url string) {
	const processes, goroutines = 4, 16
	until := time.Now().Add(3 * time.Second).UnixMilli()
	prefix := "fleet:" + budget.NewID()
	var mu sync.Mutex
	var all []admitted
	var wg sync.WaitGroup
	for p := range processes {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			"HEADROOM_FLEET_WORKER=1", "HEADROOM_FLEET_REDIS="+url, "HEADROOM_FLEET_PREFIX="+prefix,
			"HEADROOM_FLEET_GOROUTINES="+strconv.Itoa(goroutines), "HEADROOM_FLEET_UNTIL="+strconv.FormatInt(until, 10))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			var mine []admitted
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var a admitted
				if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
					t.Errorf("process %d: %q: %v", p, sc.Text(), err)
					continue
				}
				mine = append(mine, a)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("process %d: %v", p, err)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	tokens, req1, req10 := map[int64]int64{}, map[int64]int64{}, map[int64]int64{}
	for _, a := range all {
		tokens[a.W] += a.Tokens
		req1[a.W1]++
		req10[a.W10]++
	}
	capTokens := fleetLimits.TokenCap(0)
	for w, n := range tokens {
		if n > capTokens {
			t.Errorf("window %d: %d tokens admitted, cap %d", w, n, capTokens)
		}
	}
	for w, n := range req1 {
		if n > fleetLimits.PerSecond() {
			t.Errorf("1 s window %d: %d requests, limit %d", w, n, fleetLimits.PerSecond())
		}
	}
	for w, n := range req10 {
		if n > fleetLimits.PerTenSeconds() {
			t.Errorf("10 s window %d: %d requests, limit %d", w, n, fleetLimits.PerTenSeconds())
		}
	}
	if len(all) < 100 || len(tokens) < 2 {
		t.Fatalf("only %d reservations over %d windows: the test did not load the store", len(all), len(tokens))
	}
	best := int64(0)
	for _, n := range tokens {
		best = max(best, n)
	}
	t.Logf("%d reservations from %d processes over %d token windows; fullest window %d of %d tokens",
		len(all), processes, len(tokens), best, capTokens)
}
