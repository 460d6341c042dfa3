package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of three masters, no replicas, this process
// started.
type Cluster struct {
	Nodes []*Server
	dir   string
}

// clusterBus is how far above a node's port Redis puts its cluster bus.
const clusterBus = 10000

// StartCluster runs three cluster-enabled redis-servers on free loopback
// ports, joins them with redis-cli --cluster create and waits until every
// node reports the cluster healthy. Kill it when done.
func StartCluster() (*Cluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed (make test installs it): %w", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli is not installed: %w", err)
	}
	ports, err := clusterPorts(3)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-cluster")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	for _, p := range ports {
		s, err := startServer(bin, p, dir, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", p)))
		if err != nil {
			c.Kill()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		c.Kill()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.waitHealthy(ctx); err != nil {
		c.Kill()
		return nil, err
	}
	return c, nil
}

// clusterPorts picks n free loopback ports whose cluster bus ports are free
// too. The listeners stay open until all are picked, so none repeats.
func clusterPorts(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 100 {
			return nil, errors.New("no free loopback port with a free cluster bus port")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		p := l.Addr().(*net.TCPAddr).Port
		if p+clusterBus > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+clusterBus))
		if err != nil {
			continue
		}
		held = append(held, bus)
		ports = append(ports, p)
	}
	return ports, nil
}

// waitHealthy waits until every node says cluster_state:ok and knows every
// other, so that any of them can seed a client with the full slot map.
func (c *Cluster) waitHealthy(ctx context.Context) error {
	for _, n := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		var info string
		for {
			var err error
			info, err = rdb.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))) {
				break
			}
			if ctx.Err() != nil {
				rdb.Close()
				return fmt.Errorf("cluster node %s is not healthy: %v\n%s", n.Addr, err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
		rdb.Close()
	}
	return nil
}

// Addrs are the nodes' host:port addresses.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr
	}
	return a
}

// URL names every node, in go-redis's cluster URL form:
// redis://node1?addr=node2&addr=node3.
func (c *Cluster) URL() string {
	a := c.Addrs()
	return "redis://" + a[0] + "?addr=" + strings.Join(a[1:], "&addr=")
}

// SeedURL names one node only, redis+cluster://node1, as a configuration
// endpoint would: the client learns the others from it.
func (c *Cluster) SeedURL() string { return "redis+cluster://" + c.Nodes[0].Addr }

// Kill ends every node at once and removes their files.
func (c *Cluster) Kill() {
	for _, n := range c.Nodes {
		n.Kill()
	}
	_ = os.RemoveAll(c.dir)
}

var (
	sharedCluster     *Cluster
	sharedClusterErr  error
	sharedClusterOnce sync.Once
)

// PrestartCluster starts the shared cluster in the background, so that a
// test binary can overlap the seconds redis-cli takes to create it with
// tests that do not need it. SharedCluster waits for it.
func PrestartCluster() {
	go sharedClusterOnce.Do(startShared)
}

func startShared() { sharedCluster, sharedClusterErr = StartCluster() }

// SharedCluster returns a Redis Cluster started once for this test binary,
// skipping the test when redis-server or redis-cli is not installed. Tests
// sharing it keep to key prefixes of their own.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	sharedClusterOnce.Do(startShared)
	if sharedClusterErr != nil {
		var missing *exec.Error
		if errors.As(sharedClusterErr, &missing) {
			t.Skipf("no Redis Cluster for this test: %v", sharedClusterErr)
		}
		t.Fatalf("cannot start a Redis Cluster: %v", sharedClusterErr)
	}
	return sharedCluster
}

// ClusterURL is SharedCluster's URL in the addr= form; SharedCluster(t).SeedURL()
// is the redis+cluster:// one.
func ClusterURL(t testing.TB) string {
	t.Helper()
	return SharedCluster(t).URL()
}
