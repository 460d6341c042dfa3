package browser

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// killDuring runs op and SIGKILLs Chrome after it has run for after: op must
// report the crash, promptly, not a timeout or a page that did not load.
func killDuring(t *testing.T, p *Page, after time.Duration, op func(context.Context) error) {
	t.Helper()
	if p.PID() == 0 {
		t.Skip("no launched Chrome to kill")
	}
	done := make(chan error, 1)
	go func() { done <- op(ctxT(t)) }()
	time.Sleep(after)
	killed := time.Now()
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrCrashed) {
			t.Fatalf("after the kill: %v, want ErrCrashed", err)
		}
		if took := time.Since(killed); took > 5*time.Second {
			t.Errorf("the crash was reported %s after the kill", took)
		}
		t.Log(err)
	case <-time.After(20 * time.Second):
		t.Fatal("no answer 20s after the kill")
	}
}

func TestCrashDuringLoad(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{LoadTimeout: 30 * time.Second})
	killDuring(t, p, 700*time.Millisecond, func(ctx context.Context) error {
		_, err := p.Navigate(ctx, s.URL+"/slow")
		return err
	})
}

func TestCrashDuringWait(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	// A request that never ends keeps the network from going quiet.
	if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[any](`fetch('/slow'); 1`)); err != nil {
		t.Fatal(err)
	}
	killDuring(t, p, 700*time.Millisecond, func(ctx context.Context) error {
		return p.Wait(ctx, WaitNetworkQuiet, 30*time.Second)
	})
}

func TestCrashDuringDOMWait(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	// A page that changes all the time never holds still.
	if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[any](`setInterval(() => { document.title = String(Math.random()); document.body.dataset.n = String(Math.random()); }, 20); 1`)); err != nil {
		t.Fatal(err)
	}
	killDuring(t, p, 700*time.Millisecond, func(ctx context.Context) error {
		return p.Wait(ctx, WaitDOMStable, 30*time.Second)
	})
}

// A click whose navigation is cut by a crash says so: its outcome is not
// read off a page that is gone.
func TestCrashDuringClickSettle(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{LoadTimeout: 30 * time.Second})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[any](`{ const a = document.createElement('a'); a.id = 'to-slow'; a.href = '/slow'; a.textContent = 'slow'; document.body.prepend(a); } 1`)); err != nil {
		t.Fatal(err)
	}
	killDuring(t, p, 700*time.Millisecond, func(ctx context.Context) error {
		_, err := p.Click(ctx, Selector("#to-slow"))
		return err
	})
}

// Walk (what record and observe run) waits for a page's requests after
// the load; a crash in that wait fails it rather than passing unnoticed.
func TestCrashDuringWalksWait(t *testing.T) {
	t.Parallel()
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>busy</title><script>fetch('/slow')</script>")
	}))
	t.Cleanup(busy.Close)
	p := open(t, Options{})
	// Past the load's own settling (about 2 s with a request open), into
	// Walk's wait of up to 10 s.
	killDuring(t, p, 4*time.Second, func(ctx context.Context) error {
		_, err := p.Walk(ctx, busy.URL+"/")
		return err
	})
}
