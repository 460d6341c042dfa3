package learnedredis

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/internal/redact"
)

// PingTimeout bounds how long opening waits for a Redis to answer.
const PingTimeout = 5 * time.Second

func init() {
	learned.Register("redis", openRedis)
	learned.Register("rediss", openRedis)
}

func openRedis(ctx context.Context, spec string) (learned.Driver, error) {
	shown := learned.Redacted(spec)
	u, err := url.Parse(spec)
	if err != nil {
		// url.Parse's own error quotes the URL, password and all.
		return nil, fmt.Errorf("learned store %q: not a URL: want redis://HOST:PORT", shown)
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		return nil, fmt.Errorf("learned store %q: %s", shown, scrub(err, u))
	}
	// Calls honour the caller's deadline; a refused dial is not tried
	// again and again before the error is known.
	o.ContextTimeoutEnabled = true
	o.DialerRetries = 1
	quietRedis()
	c := redis.NewClient(o)
	pctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("learned store %q: %w", shown, ctx.Err())
		}
		return nil, fmt.Errorf("learned store %q: %w: %s", shown, learned.ErrUnavailable, scrub(err, u))
	}
	d := newRedis(c, RedisOptions{})
	d.owned = true
	return learned.Checked(d), nil
}

// scrub is err's text without u's password, in either spelling, for an
// error text from a library that may repeat what it was given.
func scrub(err error, u *url.URL) string {
	msg := err.Error()
	if pw, ok := u.User.Password(); ok && pw != "" {
		msg = strings.ReplaceAll(msg, pw, redact.Marker)
		if esc := url.QueryEscape(pw); esc != pw {
			msg = strings.ReplaceAll(msg, esc, redact.Marker)
		}
		if esc := url.PathEscape(pw); esc != pw {
			msg = strings.ReplaceAll(msg, esc, redact.Marker)
		}
	}
	return msg
}
