package budget

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/internal/redact"
)

// A StoreDriver opens the shared store a config's redis: field names. A
// driver package registers itself in its init, as database/sql drivers
// do, so a binary links the Redis client only when it imports the driver
// (budget/redisstore).
type StoreDriver func(ctx context.Context, url string, o StoreOptions) (Driver, error)

// StoreOptions are what every store is opened with, from the config.
type StoreOptions struct {
	Window time.Duration // the token window; default DefaultWindow
	Policy Policy        // what happens to an estimate's unused part; default Hold
	Prefix string        // namespaces the store's keys; default the driver's
}

var drivers struct {
	sync.RWMutex
	m map[string]StoreDriver
}

// RegisterStore makes a driver available for URLs of the given scheme
// (redis, rediss). Registering a scheme twice panics: two drivers for one
// scheme is a bug of the binary.
func RegisterStore(scheme string, d StoreDriver) {
	drivers.Lock()
	defer drivers.Unlock()
	if drivers.m == nil {
		drivers.m = map[string]StoreDriver{}
	}
	if _, dup := drivers.m[scheme]; dup {
		panic("budget: RegisterStore called twice for " + scheme)
	}
	drivers.m[scheme] = d
}

// OpenStore opens the store cfg names: the shared one its Redis URL points
// at, through the driver registered for its scheme, or the in-memory one
// (one process) when it names none.
func OpenStore(ctx context.Context, cfg *Config) (*Store, error) {
	o := StoreOptions{Window: cfg.Window, Policy: cfg.Refund, Prefix: cfg.RedisPrefix}
	addr, err := cfg.RedisURL()
	if err != nil {
		return nil, err
	}
	if addr == "" {
		return NewMemStore(MemOptions{Window: o.Window, Policy: o.Policy}), nil
	}
	scheme := addr
	if u, err := url.Parse(addr); err == nil && u.Scheme != "" {
		scheme = u.Scheme
		if pw, ok := u.User.Password(); ok {
			redact.Key(pw) // a driver's error may quote the URL it dialled, or a piece of it
		}
	}
	drivers.RLock()
	d, ok := drivers.m[scheme]
	var have []string
	for s := range drivers.m {
		have = append(have, s)
	}
	drivers.RUnlock()
	if !ok {
		sort.Strings(have)
		return nil, fmt.Errorf("budget: no store driver for %q URLs (redis: in the config); this program has %s: import github.com/headroom-agent/headroom/budget/redisstore to add Redis",
			scheme, cmpList(have))
	}
	dr, err := d(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return NewStore(dr), nil
}

func cmpList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
