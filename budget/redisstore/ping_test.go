package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// Ping says nil where a Redis answers, and where nothing listens, at
// once, an error that is the store's unavailability, names the URL
// without its password, and says how to start one.
func TestPing(t *testing.T) {
	if err := Ping(context.Background(), redistest.URL(t)); err != nil {
		t.Errorf("a live Redis: %v", err)
	}
	began := time.Now()
	err := Ping(context.Background(), "redis://user:hunter2secret@127.0.0.1:1/15")
	if took := time.Since(began); took > PingTimeout {
		t.Errorf("took %v", took)
	}
	if !errors.Is(err, budget.ErrUnavailable) {
		t.Fatalf("no Redis: %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "redis://127.0.0.1:1/15") || strings.Contains(msg, "hunter2secret") || !strings.Contains(msg, StartHint) {
		t.Errorf("the message: %s", msg)
	}
	if err := Ping(context.Background(), "redis+cluster://127.0.0.1:1/3"); err == nil || errors.Is(err, budget.ErrUnavailable) {
		t.Errorf("a URL that cannot be right: %v, want an error of its own", err)
	}
}
