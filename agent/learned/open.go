package learned

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Open returns the driver spec names, as a configuration or a flag writes
// it:
//
//	"" or off          no store: (nil, nil)
//	memory             NewMemory
//	dir:PATH           NewDir(PATH)
//	redis://HOST:PORT  NewRedis, on a client Open makes and Close closes
//	                   (rediss:// for TLS; a user, password and /DB as
//	                   go-redis reads them)
//
// A Redis that does not answer is an error wrapping ErrUnavailable. No
// error holds the URL's password.
func Open(ctx context.Context, spec string) (Driver, error) {
	switch {
	case spec == "" || spec == "off":
		return nil, nil
	case spec == "memory":
		return NewMemory(), nil
	case strings.HasPrefix(spec, "dir:"):
		path := strings.TrimPrefix(spec, "dir:")
		if path == "" {
			return nil, fmt.Errorf("learned store %q: dir: needs a directory after it, as in dir:/var/lib/headroom/learned", spec)
		}
		return NewDir(path)
	case strings.HasPrefix(spec, "redis://") || strings.HasPrefix(spec, "rediss://"):
		open := opener(strings.SplitN(spec, ":", 2)[0])
		if open == nil {
			return nil, fmt.Errorf("learned store %q: this program has no Redis driver: import github.com/headroom-agent/headroom/agent/learned/learnedredis", Redacted(spec))
		}
		return open(ctx, spec)
	}
	return nil, fmt.Errorf("learned store %q: want off, memory, dir:PATH or redis://HOST:PORT", Redacted(spec))
}

// Redacted is a store spec fit for a message, for drivers too. One that
// does not parse as a URL
// loses everything between "://" and the last '@', where a password
// would be.
func Redacted(spec string) string {
	if _, err := url.Parse(spec); err == nil {
		return redact.URL(spec)
	}
	scheme, at := strings.Index(spec, "://"), strings.LastIndex(spec, "@")
	if scheme >= 0 && at > scheme {
		spec = spec[:scheme+3] + "…" + spec[at:]
	}
	return redact.Text(spec)
}

// Drivers for URL schemes register here (as database/sql's do), so a
// program links Redis only when it imports learnedredis.
var (
	openersMu sync.Mutex
	openers   = map[string]func(context.Context, string) (Driver, error){}
)

// Register makes Open use open for specs of the URL scheme (redis,
// rediss). A driver package calls it from its init.
func Register(scheme string, open func(ctx context.Context, spec string) (Driver, error)) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = open
}

func opener(scheme string) func(context.Context, string) (Driver, error) {
	openersMu.Lock()
	defer openersMu.Unlock()
	return openers[scheme]
}
