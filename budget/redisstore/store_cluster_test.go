package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/storetest"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// Each store of the suite has a key prefix of its own, so the suite shares
// the cluster without flushing it.
func TestClusterConformance(t *testing.T) {
	storetest.RunConformanceTests(t, harness{url: redistest.ClusterURL(t)})
}

func TestClusterFleetOfProcessesNeverOverspends(t *testing.T) {
	url := redistest.ClusterURL(t)
	t.Parallel() // with the single server's fleet: both mostly wait on Redis
	hammer(t, url)
}

// nodeClients are plain clients of each node, which see only what that
// node holds.
func nodeClients(t *testing.T, c *redistest.Cluster) []*redis.Client {
	t.Helper()
	var out []*redis.Client
	for _, a := range c.Addrs() {
		rdb := redis.NewClient(&redis.Options{Addr: a})
		t.Cleanup(func() { rdb.Close() })
		out = append(out, rdb)
	}
	return out
}

// spreadDeployments returns deployment names whose tags under prefix fall
// on every master of the cluster, one per master, by the slot map the
// nodes themselves report.
func spreadDeployments(t *testing.T, nodes []*redis.Client, s *Driver) []string {
	t.Helper()
	ctx := context.Background()
	//lint:ignore SA1019 CLUSTER SHARDS needs Redis 7; distributions still ship 6.
	slots, err := nodes[0].ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	owner := func(slot int64) string {
		for _, r := range slots {
			if int64(r.Start) <= slot && slot <= int64(r.End) {
				return r.Nodes[0].Addr
			}
		}
		t.Fatalf("slot %d has no owner in %+v", slot, slots)
		return ""
	}
	byMaster := map[string]string{}
	for i := 0; len(byMaster) < len(nodes) && i < 1000; i++ {
		d := fmt.Sprintf("d%d", i)
		slot, err := nodes[0].ClusterKeySlot(ctx, s.tag(d)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if m := owner(slot); byMaster[m] == "" {
			byMaster[m] = d
		}
	}
	if len(byMaster) != len(nodes) {
		t.Fatalf("deployments on %d masters of %d", len(byMaster), len(nodes))
	}
	var out []string
	for _, d := range byMaster {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// scanNode lists the keys one node holds that match pattern.
func scanNode(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(context.Background(), 0, pattern, 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// Deployments' keys land on every master, each deployment's all on one;
// every operation works on them, and Usage reads them all in one pipeline
// that go-redis splits by node. An hour's window keeps the test clear of a
// window boundary.
func TestClusterSpreadsDeploymentsOverMasters(t *testing.T) {
	c := redistest.SharedCluster(t)
	nodes := nodeClients(t, c)
	s := harness{url: c.URL()}.open(t, "spread:"+budget.NewID(), time.Hour, budget.Hold)
	ctx := context.Background()
	deps := spreadDeployments(t, nodes, s)
	lim := budget.Limits{Tokens: 100000, Requests: 600}
	for i, d := range deps {
		r, err := s.Reserve(ctx, budget.NewID(), d, budget.Cost{Tokens: int64(100 * (i + 1))}, lim)
		if err != nil {
			t.Fatalf("Reserve on %s: %v", d, err)
		}
		if err := s.Settle(ctx, r, 10); err != nil {
			t.Fatal(err)
		}
		if err := s.Absorb(ctx, d, 5, 1); err != nil {
			t.Fatalf("Absorb on %s: %v", d, err)
		}
		if err := s.SetEffectiveLimit(ctx, d, 50000, time.Minute); err != nil {
			t.Fatalf("SetEffectiveLimit on %s: %v", d, err)
		}
		if _, err := s.OpenBreaker(ctx, d, time.Minute); err != nil {
			t.Fatalf("OpenBreaker on %s: %v", d, err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// Each master holds the keys of exactly the deployment picked for it,
	// and Footprint (which must scan the right node) counts them all.
	for i, d := range deps {
		holders := 0
		for _, n := range nodes {
			if keys := scanNode(t, n, globEscape(s.tag(d))+"*"); len(keys) > 0 {
				holders++
				fp, err := s.Footprint(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				if fp != len(keys) {
					t.Errorf("Footprint(%s) = %d, the node holds %d: %v", d, fp, len(keys), keys)
				}
			}
		}
		if holders != 1 {
			t.Errorf("deployment %s (#%d) has keys on %d nodes, want 1", d, i, holders)
		}
	}
	for _, n := range nodes {
		if keys := scanNode(t, n, globEscape("{"+s.prefix+":")+"*"); len(keys) == 0 {
			t.Errorf("master %s holds none of the store's keys", n.Options().Addr)
		}
	}

	us, err := s.Usage(ctx, deps...)
	if err != nil {
		t.Fatalf("Usage across masters: %v", err)
	}
	for i, u := range us {
		want := int64(100*(i+1)) + 5
		if u.Deployment != deps[i] || u.Reserved != want || u.Settled != int64(100*(i+1)) || u.EffectiveLimit != 50000 || u.OpenUntil.IsZero() {
			t.Errorf("usage of %s: %+v, want %d reserved, settled %d, the limit and breaker set", deps[i], u, want, 100*(i+1))
		}
	}
}

// New loads the scripts on every node; Usage's pipeline and Reserve still
// work when some nodes lose them.
func TestClusterScriptsOnEveryNode(t *testing.T) {
	c := redistest.SharedCluster(t)
	nodes := nodeClients(t, c)
	s := harness{url: c.URL()}.open(t, "scripts:"+budget.NewID(), time.Hour, budget.Hold)
	ctx := context.Background()
	var hashes []string
	for _, x := range scripts {
		hashes = append(hashes, x.sc.Hash())
	}
	loaded := func(when string) {
		t.Helper()
		for _, n := range nodes {
			ok, err := n.ScriptExists(ctx, hashes...).Result()
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(ok, false) {
				t.Errorf("%s: node %s has scripts %v of %v", when, n.Options().Addr, ok, hashes)
			}
		}
	}
	loaded("after New")

	deps := spreadDeployments(t, nodes, s)
	lim := budget.Limits{Tokens: 100000, Requests: 600}
	for _, d := range deps {
		if _, err := s.Reserve(ctx, budget.NewID(), d, budget.Cost{Tokens: 7}, lim); err != nil {
			t.Fatal(err)
		}
	}
	// Every node but the first forgets the scripts, as nodes that were
	// never loaded would be.
	for _, n := range nodes[1:] {
		if err := n.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	us, err := s.Usage(ctx, deps...)
	if err != nil {
		t.Fatalf("Usage after SCRIPT FLUSH on two nodes: %v", err)
	}
	for _, u := range us {
		if u.Reserved != 7 {
			t.Errorf("usage %+v, want 7 reserved", u)
		}
	}
	loaded("after Usage met NOSCRIPT")

	for _, n := range nodes {
		n.ScriptFlush(ctx)
	}
	for _, d := range deps {
		if _, err := s.Reserve(ctx, budget.NewID(), d, budget.Cost{Tokens: 1}, lim); err != nil {
			t.Errorf("Reserve on %s after SCRIPT FLUSH: %v", d, err)
		}
	}
}

// Both cluster URL forms give a cluster client that finds all three
// masters, and a config naming either opens a working store.
func TestDialClusterForms(t *testing.T) {
	c := redistest.SharedCluster(t)
	for _, u := range []string{c.URL(), c.SeedURL()} {
		st, err := budget.OpenStore(context.Background(), &budget.Config{Redis: u, Window: time.Hour})
		if err != nil {
			t.Fatalf("OpenStore(%s): %v", u, err)
		}
		if _, err := st.Reserve(context.Background(), "", "open:"+budget.NewID(), budget.Cost{Tokens: 1}, budget.Limits{Tokens: 10, Requests: 600}); err != nil {
			t.Errorf("Reserve on the store %s opens: %v", u, err)
		}
		st.Close()

		rdb, err := Dial(u, 3)
		if err != nil {
			t.Fatal(err)
		}
		cc, ok := rdb.(*redis.ClusterClient)
		if !ok {
			t.Fatalf("Dial(%s) = %T, want *redis.ClusterClient", u, rdb)
		}
		var mu sync.Mutex
		var masters []string
		err = cc.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			masters = append(masters, m.Options().Addr)
			mu.Unlock()
			return m.Ping(ctx).Err()
		})
		if err != nil || len(masters) != 3 {
			t.Errorf("Dial(%s): masters %v, %v; want the 3 of %v", u, masters, err, c.Addrs())
		}
		rdb.Close()
	}
}

// Dial picks the client by the URL and sets the budget's timeouts on
// either; it connects to nothing yet.
func TestDialPicksTheClient(t *testing.T) {
	for _, c := range []struct {
		url     string
		cluster bool
		addrs   []string
		tls     bool
	}{
		{"redis://10.0.0.5:6379/2", false, []string{"10.0.0.5:6379"}, false},
		{"rediss://10.0.0.5:6380", false, []string{"10.0.0.5:6380"}, true},
		{"redis://h1:7000?addr=h2:7001&addr=h3:7002", true, []string{"h1:7000", "h2:7001", "h3:7002"}, false},
		{"rediss://u:pw@h1:7000/0?addr=h2:7001", true, []string{"h1:7000", "h2:7001"}, true},
		{"redis+cluster://cfg.example:6379", true, []string{"cfg.example:6379"}, false},
		{"rediss+cluster://:pw@clustercfg.x.cache.amazonaws.com:6379/", true, []string{"clustercfg.x.cache.amazonaws.com:6379"}, true},
		{"redis+cluster://cfg.example:6379?db=0&addr=n2:6379", true, []string{"cfg.example:6379", "n2:6379"}, false},
	} {
		rdb, err := Dial(c.url, 7)
		if err != nil {
			t.Errorf("Dial(%s): %v", c.url, err)
			continue
		}
		switch r := rdb.(type) {
		case *redis.ClusterClient:
			o := r.Options()
			if !c.cluster || !slices.Equal(o.Addrs, c.addrs) || (o.TLSConfig != nil) != c.tls ||
				o.DialTimeout != dialTimeout || o.ReadTimeout != DefaultTimeout || o.WriteTimeout != DefaultTimeout ||
				o.PoolTimeout != DefaultTimeout || !o.ContextTimeoutEnabled || o.MaxRetries != 1 || o.DialerRetries != 1 || o.PoolSize != 7 {
				t.Errorf("Dial(%s) = cluster client with %+v", c.url, o)
			}
			if strings.Contains(c.url, "pw@") && o.Password != "pw" {
				t.Errorf("Dial(%s): password %q", c.url, o.Password)
			}
		case *redis.Client:
			o := r.Options()
			if c.cluster || o.Addr != c.addrs[0] || (o.TLSConfig != nil) != c.tls ||
				o.DialTimeout != dialTimeout || o.ReadTimeout != DefaultTimeout || o.WriteTimeout != DefaultTimeout ||
				o.PoolTimeout != DefaultTimeout || !o.ContextTimeoutEnabled || o.MaxRetries != 1 || o.DialerRetries != 1 || o.PoolSize != 7 {
				t.Errorf("Dial(%s) = client with %+v", c.url, o)
			}
		default:
			t.Errorf("Dial(%s) = %T", c.url, rdb)
		}
		rdb.Close()
	}
}

func TestDialClusterURLErrors(t *testing.T) {
	for _, c := range []struct{ url, says string }{
		{"redis://h1:7000/2?addr=h2:7001", "database 2"},
		{"redis+cluster://h:6379/5", "database 5"},
		{"rediss+cluster://h:6379?db=3", "database 3"},
		{"redis+cluster://u:hunter2@h:6379/9", "database 9"},
		{"redis://h1:7000?addr=u:hunter2@h2:7001", "addr= takes host:port"},
		{"redis://h1:7000?addr=h2", "addr"},
		{"unix+cluster:///tmp/redis.sock", "redis+cluster://"},
		{"redis://u:hunter2@h:port/0", "not a URL"},
		{"redis+cluster://u:hunter2@h:6379?color=blue", "color"},
	} {
		rdb, err := Dial(c.url, 0)
		if err == nil {
			rdb.Close()
			t.Errorf("Dial(%s) took it", c.url)
			continue
		}
		if !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Dial(%s) = %v, want %q and no password", c.url, err, c.says)
		}
	}
}

func TestRedactClusterURLs(t *testing.T) {
	for _, u := range []string{
		"redis://:hunter2@h1:7000?addr=h2:7001&addr=h3:7002",
		"rediss://user:hunter2@h1:7000/0?addr=h2:7001",
		"redis+cluster://user:hunter2@cfg.example:6379",
		"rediss+cluster://:hunter2@clustercfg.x.cache.amazonaws.com:6379",
		"redis://h1:7000?addr=user:hunter2@h2:7001",
	} {
		if r := Redact(u); strings.Contains(r, "hunter2") || !strings.Contains(r, "://") {
			t.Errorf("Redact(%s) = %s", u, r)
		}
	}
}

// Footprint counts a deployment's keys only, whatever SCAN MATCH would make
// of its name; on a cluster the escaped pattern still reaches the node the
// keys are on.
func TestFootprintOfPatternNames(t *testing.T) {
	for name, url := range map[string]string{"server": redistest.URL(t), "cluster": redistest.ClusterURL(t)} {
		t.Run(name, func(t *testing.T) {
			s := harness{url: url}.open(t, "glob:"+budget.NewID(), time.Hour, budget.Hold)
			ctx := context.Background()
			deps := []string{"x", "x*", "x?", "x[ab]", `x\`}
			for _, d := range deps {
				if _, err := s.Reserve(ctx, budget.NewID(), d, budget.Cost{Tokens: 1}, budget.Limits{Tokens: 10, Requests: 600}); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range deps {
				// The windows hash and this window's reservation records.
				if n, err := s.Footprint(ctx, d); n != 2 || err != nil {
					t.Errorf("Footprint(%q) = %d, %v; want 2", d, n, err)
				}
			}
		})
	}
}
