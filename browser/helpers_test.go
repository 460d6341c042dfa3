package browser

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/testsite"
)

func site(t testing.TB) *httptest.Server {
	t.Helper()
	s, err := testsite.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func open(t testing.TB, o Options) *Page {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
