package top

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/headroom-agent/headroom/budget"
)

// screen is a simulated terminal whose contents a test may read while Run
// draws: the simulation hands out its cells without a lock.
type screen struct {
	tcell.SimulationScreen
	mu sync.Mutex
}

func newScreen() *screen { return &screen{SimulationScreen: tcell.NewSimulationScreen("UTF-8")} }

func (s *screen) Init() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.SimulationScreen.Init()
}

func (s *screen) Show() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.SimulationScreen.Show()
}

func (s *screen) Sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.SimulationScreen.Sync()
}

// resize is the terminal's window changing size.
func (s *screen) resize(w, h int) {
	s.mu.Lock()
	s.SetSize(w, h)
	s.mu.Unlock()
	_ = s.PostEvent(tcell.NewEventResize(w, h))
}

// screenText is what the screen shows, a line a row.
func screenText(s *screen) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cells, w, h := s.GetContents()
	var b strings.Builder
	for y := range h {
		for x := range w {
			c := cells[y*w+x]
			if len(c.Bytes) == 0 {
				b.WriteByte(' ')
			} else {
				b.Write(c.Bytes)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// waitFor polls the screen until it shows want.
func waitFor(t *testing.T, s *screen, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := screenText(s)
		if strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", want, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTopRunQuitsOnKeys(t *testing.T) {
	for _, k := range []struct {
		name string
		key  tcell.Key
		r    rune
	}{{"q", tcell.KeyRune, 'q'}, {"Ctrl-C", tcell.KeyCtrlC, 0}} {
		t.Run(k.name, func(t *testing.T) {
			s := newScreen()
			var reads atomic.Int64
			src := func(context.Context) (budget.Dashboard, error) {
				n := reads.Add(1)
				return dashboard(view("gpt4o-a", 100_000, 600, n*1_000)), nil
			}
			done := make(chan error, 1)
			go func() { done <- Run(context.Background(), s, src, Options{Name: "c.yaml"}, 20*time.Millisecond) }()
			waitFor(t, s, "gpt4o-a")
			// Refreshed: a later read shows a larger reservation.
			waitFor(t, s, "5,000 / 100,000")
			if got := screenText(s); !strings.Contains(got, "q quits") {
				t.Errorf("the live view does not say how to quit:\n%s", got)
			}
			s.InjectKey(k.key, k.r, tcell.ModNone)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run after %s: %v", k.name, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Run did not return after %s", k.name)
			}
		})
	}
}

func TestTopRunEndsWithContext(t *testing.T) {
	s := newScreen()
	ctx, cancel := context.WithCancel(context.Background())
	src := func(context.Context) (budget.Dashboard, error) {
		return dashboard(view("gpt4o-a", 100_000, 600, 0)), nil
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, src, Options{}, time.Second) }()
	waitFor(t, s, "gpt4o-a")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

func TestTopRunKeepsLastFrameOnError(t *testing.T) {
	s := newScreen()
	var reads atomic.Int64
	src := func(context.Context) (budget.Dashboard, error) {
		if reads.Add(1) == 1 {
			return dashboard(view("gpt4o-a", 100_000, 600, 12_345)), nil
		}
		return budget.Dashboard{}, budget.ErrUnavailable
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, src, Options{}, 20*time.Millisecond) }()
	got := waitFor(t, s, "the store did not answer")
	if !strings.Contains(got, "12,345 / 100,000") || !strings.Contains(got, "the frame is from") {
		t.Errorf("a failed read dropped the last frame:\n%s", got)
	}
	cancel()
	<-done
}

func TestTopRunNarrowScreen(t *testing.T) {
	s := newScreen()
	src := func(context.Context) (budget.Dashboard, error) {
		return dashboard(view("gpt4o-a", 100_000, 600, 0), view("gpt4o-b", 100_000, 600, 0), view("gpt4o-c", 100_000, 600, 0)), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, src, Options{}, time.Second) }()
	waitFor(t, s, "gpt4o-c")
	s.resize(30, 10)
	got := waitFor(t, s, "more deployment")
	if !strings.Contains(got, "gpt4o-a") {
		t.Errorf("a 30x10 screen shows no deployment:\n%s", got)
	}
	cancel()
	<-done
}
