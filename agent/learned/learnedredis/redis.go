package learnedredis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/agent/learned"
)

// RedisOptions configure NewRedis. The zero value works.
type RedisOptions struct {
	// TTL is how long an entry is kept after it was last written or read
	// (default 30 days): a template no one runs any more is forgotten.
	TTL time.Duration
	// Prefix comes before every entry's key (default "headroom:learned:"),
	// so several fleets or tests can share one server. Leases go under the
	// prefix without its trailing ':' and with "-lease:" added
	// ("headroom:learned-lease:"), out of the entries' way.
	Prefix string
}

// DefaultRedisTTL is RedisOptions.TTL when none is given.
const DefaultRedisTTL = 30 * 24 * time.Hour

// DefaultRedisPrefix is RedisOptions.Prefix when none is given.
const DefaultRedisPrefix = "headroom:learned:"

// redisDriver keeps each entry as a hash {rev, data} at PREFIX+KEY and each
// lease as a string (the holder) with an expiry. Every write is one Lua
// script, which go-redis sends again after a read timeout: each is written
// so that running twice does what running once did.
type redisDriver struct {
	rdb         redis.UniversalClient
	prefix      string
	leasePrefix string
	ttl         time.Duration
	owned       bool // the client is this driver's to close
	closeOnce   sync.Once
	closeErr    error
}

// NewRedis returns a driver that keeps entries in the Redis client talks
// to, shared by every process of a fleet. Close leaves the client open:
// it is the caller's.
func NewRedis(client redis.UniversalClient, o RedisOptions) learned.Driver {
	return learned.Checked(newRedis(client, o))
}

func newRedis(client redis.UniversalClient, o RedisOptions) *redisDriver {
	quietRedis()
	prefix := cmp.Or(o.Prefix, DefaultRedisPrefix)
	return &redisDriver{
		rdb:         client,
		prefix:      prefix,
		leasePrefix: strings.TrimSuffix(prefix, ":") + "-lease:",
		ttl:         cmp.Or(o.TTL, DefaultRedisTTL),
	}
}

// putScript writes ARGV[2] as revision ARGV[1] of KEYS[1] when the stored
// revision is one less, or leaves an identical write alone; 1 when it did
// either, 0 for a conflict. ARGV[3] is the time to live in milliseconds.
var putScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
local rev = tonumber(ARGV[1])
if cur == rev and redis.call('HGET', KEYS[1], 'data') == ARGV[2] then
	redis.call('PEXPIRE', KEYS[1], ARGV[3])
	return 1
end
if cur ~= rev - 1 then
	return 0
end
redis.call('HSET', KEYS[1], 'rev', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// claimScript sets lease KEYS[1] to holder ARGV[1] for ARGV[2] ms when it
// is free (an expired lease is gone) or already the holder's.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then
	return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// releaseScript deletes lease KEYS[1] only if holder ARGV[1] has it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('DEL', KEYS[1])
end
return 0
`)

func (r *redisDriver) Get(ctx context.Context, key string) ([]byte, int64, error) {
	k := r.prefix + key
	var get *redis.SliceCmd
	// Reading renews the entry's time to live: a template in use stays.
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HMGet(ctx, k, "rev", "data")
		p.PExpire(ctx, k, r.ttl)
		return nil
	})
	if err != nil {
		return nil, 0, r.fail(ctx, "get", key, err)
	}
	v := get.Val()
	if len(v) != 2 || v[0] == nil {
		return nil, 0, learned.ErrNotFound
	}
	revText, _ := v[0].(string)
	data, _ := v[1].(string)
	rev, err := strconv.ParseInt(revText, 10, 64)
	if err != nil || rev < 1 {
		return nil, 0, fmt.Errorf("learned: redis key %s is damaged: revision %q", k, revText)
	}
	return []byte(data), rev, nil
}

func (r *redisDriver) Put(ctx context.Context, key string, rev int64, data []byte) error {
	n, err := putScript.Run(ctx, r.rdb, []string{r.prefix + key}, rev, data, r.ttl.Milliseconds()).Int()
	if err != nil {
		return r.fail(ctx, "put", key, err)
	}
	if n == 0 {
		return learned.ErrConflict
	}
	return nil
}

func (r *redisDriver) Delete(ctx context.Context, key string) error {
	if err := r.rdb.Del(ctx, r.prefix+key).Err(); err != nil {
		return r.fail(ctx, "delete", key, err)
	}
	return nil
}

func (r *redisDriver) Keys(ctx context.Context) ([]string, error) {
	var (
		mu   sync.Mutex
		keys []string
	)
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, globQuote(r.prefix)+"*", 1000).Iterator()
		for it.Next(ctx) {
			// A key of another shape under the prefix (a lease, when the
			// prefix has no trailing ':') is not an entry.
			if key := strings.TrimPrefix(it.Val(), r.prefix); learned.CheckKey(key) == nil {
				mu.Lock()
				keys = append(keys, key)
				mu.Unlock()
			}
		}
		return it.Err()
	}
	var err error
	switch c := r.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		err = fmt.Errorf("learned: listing keys through a %T is not supported", r.rdb)
	}
	if err != nil {
		return nil, r.fail(ctx, "keys", "", err)
	}
	slices.Sort(keys)
	// SCAN may return a key more than once.
	return slices.Compact(keys), nil
}

// globQuote escapes what SCAN MATCH would read as a pattern.
func globQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *redisDriver) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	// Redis keeps whole milliseconds; less would be no lease at all.
	ms := max(ttl.Milliseconds(), 1)
	n, err := claimScript.Run(ctx, r.rdb, []string{r.leasePrefix + key}, holder, ms).Int()
	if err != nil {
		return false, r.fail(ctx, "claim", key, err)
	}
	return n == 1, nil
}

func (r *redisDriver) Release(ctx context.Context, key, holder string) error {
	if err := releaseScript.Run(ctx, r.rdb, []string{r.leasePrefix + key}, holder).Err(); err != nil {
		return r.fail(ctx, "release", key, err)
	}
	return nil
}

func (r *redisDriver) Close() error {
	if !r.owned {
		return nil
	}
	r.closeOnce.Do(func() { r.closeErr = r.rdb.Close() })
	return r.closeErr
}

// fail says what went wrong with op. A reply from the server (a wrong
// type, a script error) means the server is there and is passed on as it
// is; the caller's context ending is the caller's; anything else (a
// refused dial, a timeout, a closed client) means the store cannot be
// reached, and wraps learned.ErrUnavailable.
func (r *redisDriver) fail(ctx context.Context, op, key string, err error) error {
	what := "learned: redis " + op
	if key != "" {
		what += " " + strconv.Quote(key)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	var reply redis.Error
	if errors.As(err, &reply) && !busy(reply.Error()) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %w", what, learned.ErrUnavailable, err)
}

// busy replies mean the server cannot serve now: as good as unreachable.
func busy(msg string) bool {
	for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY", "NOREPLICAS"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// The client's own log lines ("failed to dial …") would repeat, on
// stderr, what every call already returns as an error.
var quiet sync.Once

func quietRedis() { quiet.Do(func() { redis.SetLogger(discard{}) }) }

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
