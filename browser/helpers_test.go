package browser

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/testsite"
)

// TestMain skips the examples when no browser can be found: an example
// cannot skip itself, and without Chrome its output could never match.
func TestMain(m *testing.M) {
	flag.Parse()
	if _, err := findChrome(""); err != nil {
		skip := "^Example"
		if f := flag.Lookup("test.skip"); f != nil {
			if prev := f.Value.String(); prev != "" {
				skip = prev + "|" + skip
			}
			_ = f.Value.Set(skip)
		}
		fmt.Fprintf(os.Stderr, "skipping the examples: %v\n", err)
	}
	os.Exit(m.Run())
}

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
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openAt opens a page confined to this machine on path of a test site of
// its own, for a test that acts on one of the site's pages.
func openAt(t *testing.T, path string) (*Page, context.Context) {
	t.Helper()
	s := site(t)
	ctx := ctxT(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	if _, err := p.Navigate(ctx, s.URL+path); err != nil {
		t.Fatal(err)
	}
	return p, ctx
}
