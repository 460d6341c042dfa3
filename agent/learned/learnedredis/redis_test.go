package learnedredis_test

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/agent/learned/learnedredis"
	"github.com/headroom-agent/headroom/agent/learned/learnedtest"
	"github.com/headroom-agent/headroom/internal/redistest"
)

var bg = context.Background()

// redisClient is a client of the test Redis, closed when the test ends.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// testPrefix keeps each test's keys apart on the shared server.
func testPrefix() string { return "test:learned:" + rand.Text() + ":" }

// newRedis is a driver on the test Redis under prefix whose entries are
// deleted when the test ends (a server REDIS_URL names outlives it).
func newRedis(t *testing.T, c *redis.Client, prefix string) learned.Driver {
	t.Helper()
	d := learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: prefix})
	t.Cleanup(func() {
		keys, _ := d.Keys(bg)
		for _, k := range keys {
			d.Delete(bg, k)
		}
	})
	return d
}

func TestRedis(t *testing.T) {
	learnedtest.Run(t, func(t *testing.T) learned.Driver {
		return newRedis(t, redisClient(t), testPrefix())
	})
}

// Keys are stored under the prefix, expire after the TTL and renew it when
// read; leases are kept apart from them.
func TestRedisLayout(t *testing.T) {
	c := redisClient(t)
	prefix := testPrefix()
	newRedis(t, c, prefix) // for its cleanup
	d := learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: prefix, TTL: time.Hour})
	if err := d.Put(bg, "k", 1, []byte("one")); err != nil {
		t.Fatal(err)
	}
	h, err := c.HGetAll(bg, prefix+"k").Result()
	if err != nil || h["rev"] != "1" || h["data"] != "one" {
		t.Fatalf("stored hash %v, %v", h, err)
	}
	if ttl := c.PTTL(bg, prefix+"k").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("entry TTL %v, want an hour", ttl)
	}
	c.PExpire(bg, prefix+"k", time.Minute)
	if _, _, err := d.Get(bg, "k"); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(bg, prefix+"k").Val(); ttl <= 59*time.Minute {
		t.Errorf("entry TTL %v after a read, want it renewed to an hour", ttl)
	}
	if _, err := d.Claim(bg, "k", "run-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	lease := prefix[:len(prefix)-1] + "-lease:k"
	if got := c.Get(bg, lease).Val(); got != "run-a" {
		t.Errorf("lease %s holds %q, want run-a", lease, got)
	}
	// Another prefix is another store.
	other := learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: testPrefix()})
	if keys, err := other.Keys(bg); err != nil || len(keys) != 0 {
		t.Errorf("another prefix sees %q, %v", keys, err)
	}
	// Close leaves a client the driver was given open.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(bg).Err(); err != nil {
		t.Errorf("the caller's client after Close: %v", err)
	}
}

// A prefix without a trailing ':' puts leases under the prefix too; Keys
// still lists only entries, and a prefix holding glob characters matches
// only itself.
func TestRedisPrefixShapes(t *testing.T) {
	c := redisClient(t)
	base := "test:learned:" + rand.Text()
	for _, prefix := range []string{base + "-bare", base + "[x]*?"} {
		d := newRedis(t, c, prefix)
		if err := d.Put(bg, "k", 1, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Claim(bg, "held", "h", time.Minute); err != nil {
			t.Fatal(err)
		}
		keys, err := d.Keys(bg)
		if err != nil || !slices.Equal(keys, []string{"k"}) {
			t.Errorf("prefix %q: Keys = %q, %v; want [k]", prefix, keys, err)
		}
	}
	// "[x]*?" as a pattern would match "x…"; as a prefix it is literal.
	if err := c.HSet(bg, base+"x-stray", "rev", "1", "data", "x").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Del(bg, base+"x-stray") })
	d := learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: base + "[x]*?"})
	if keys, _ := d.Keys(bg); !slices.Equal(keys, []string{"k"}) {
		t.Errorf("Keys = %q: the prefix was read as a pattern", keys)
	}
}

// With no server to talk to, every call says the store is unavailable.
func TestRedisUnavailable(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer c.Close()
	d := learnedredis.NewRedis(c, learnedredis.RedisOptions{})
	if _, _, err := d.Get(bg, "k"); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Get = %v, want ErrUnavailable", err)
	}
	if err := d.Put(bg, "k", 1, []byte("x")); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Put = %v, want ErrUnavailable", err)
	}
	if _, err := d.Keys(bg); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Keys = %v, want ErrUnavailable", err)
	}
	if _, err := d.Claim(bg, "k", "h", time.Minute); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Claim = %v, want ErrUnavailable", err)
	}
	if err := d.Release(bg, "k", "h"); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Release = %v, want ErrUnavailable", err)
	}
	if err := d.Delete(bg, "k"); !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Delete = %v, want ErrUnavailable", err)
	}
}

// A server that answers with an error (a key of another type) is there:
// that is no outage.
func TestRedisWrongType(t *testing.T) {
	c := redisClient(t)
	prefix := testPrefix()
	if err := c.Set(bg, prefix+"k", "a string", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Del(bg, prefix+"k") })
	d := learnedredis.NewRedis(c, learnedredis.RedisOptions{Prefix: prefix})
	if _, _, err := d.Get(bg, "k"); err == nil || errors.Is(err, learned.ErrUnavailable) || errors.Is(err, learned.ErrNotFound) {
		t.Errorf("Get of a string key = %v, want a server error", err)
	}
	if err := d.Put(bg, "k", 1, []byte("x")); err == nil || errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Put over a string key = %v, want a server error", err)
	}
}
