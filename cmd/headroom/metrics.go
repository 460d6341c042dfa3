package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// emfEvery is how often --emf writes a set of lines; one more is written
// when the command ends.
const emfEvery = 10 * time.Second

// metricsFlags are --emf and --metrics-addr, on every command that runs
// calls through a budget.
type metricsFlags struct {
	emf  string
	addr string
	// stderr is where the sinks say what failed (os.Stderr when nil): a
	// sink that stops is said, and the command's work goes on.
	stderr io.Writer
}

// warn says a sink's failure.
func (m *metricsFlags) warn(format string, args ...any) {
	w := m.stderr
	if w == nil {
		w = os.Stderr
	}
	fprintf(w, "headroom: "+format+"\n", args...)
}

func (m *metricsFlags) add(fs flagSet) {
	fs.StringVar(&m.emf, "emf", "", "write the budget's metrics as CloudWatch Embedded Metric Format lines to this `file` (- for standard output) every 10 s and at the end")
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://`ADDR`/metrics while the command runs")
}

// flagSet is what metricsFlags needs of a *flag.FlagSet.
type flagSet interface {
	StringVar(p *string, name, value, usage string)
}

// callerSource reads a Caller's view: its router's dashboard, from the
// store, and its call types.
func callerSource(c *llm.Caller) metrics.Source {
	return func(ctx context.Context) (metrics.View, error) {
		v := metrics.View{Runs: c.Runs()}
		v.At, v.Agents = time.Now(), -1
		var err error
		if c.Dispatcher != nil {
			var d budget.Dashboard
			if d, err = c.Dispatcher.Router().Dashboard(ctx); err == nil {
				v.Dashboard = d
			}
		}
		for name, s := range c.Stats() {
			v.Types = append(v.Types, metrics.Type{Name: name, Calls: s.Calls, TokensReserved: s.TokensReserved, TokensUsed: s.TokensUsed,
				Mended: s.Mended, Repaired: s.Repaired, Invalid: s.Invalid, PromptTokens: s.PromptTokensBy, CachedTokens: s.CachedTokensBy,
				Images: s.Images, ImageTokens: s.ImageTokens, TierFallbacks: s.TierFallbacks})
		}
		return v, err // the caller's own counts, whether the store answered or not
	}
}

// learnedSource adds a library's counts to a view, under the task's
// name: one agent, one task.
func learnedSource(src metrics.Source, lib *learned.Library, task string) metrics.Source {
	if lib == nil {
		return src
	}
	return func(ctx context.Context) (metrics.View, error) {
		v, err := src(ctx)
		s := lib.Stats()
		l := metrics.Learned{Task: task, Hits: int64(s.Hits), Heals: int64(s.Heals), Misses: map[string]int64{}}
		for reason, n := range s.Misses {
			l.Misses[reason] = int64(n)
		}
		v.Learned = append(v.Learned, l)
		return v, err
	}
}

// start begins the sinks the flags ask for; stop (safe to call twice)
// writes the last EMF lines and stops serving. An error is bad usage (a
// file that cannot be written, an address that cannot be bound); what
// fails once they run (a flush, the file's close, the server) is said on
// m.stderr.
func (m *metricsFlags) start(src metrics.Source, stdout io.Writer) (stop func(), err error) {
	var stops []func()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			for i := len(stops) - 1; i >= 0; i-- {
				stops[i]()
			}
		})
	}
	if m.emf != "" {
		s, err := m.startEMF(src, stdout)
		if err != nil {
			return stop, err
		}
		stops = append(stops, s)
	}
	if m.addr != "" {
		s, err := m.servePrometheus(src)
		if err != nil {
			stop()
			return func() {}, err
		}
		stops = append(stops, s)
	}
	return stop, nil
}

// startEMF writes EMF lines to --emf every emfEvery; its stop writes the
// last ones and closes the file.
func (m *metricsFlags) startEMF(src metrics.Source, stdout io.Writer) (stop func(), err error) {
	w := stdout
	closeFile := func() {}
	if m.emf != "-" {
		if err := safefile.PrepareTarget(m.emf); err != nil {
			return nil, fmt.Errorf("--emf: %w", err)
		}
		f, err := safefile.OpenAppend(m.emf, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--emf: %w", err)
		}
		closeFile = func() {
			if err := f.Close(); err != nil {
				m.warn("--emf: closing %s: %v", m.emf, err)
			}
		}
		w = f
	}
	e := metrics.NewEMF(w, src)
	var said sync.Once
	e.Failed = func(err error) {
		said.Do(func() {
			m.warn("--emf: writing the metrics: %v (tried again every %s; the count at the end)", err, emfEvery)
		})
	}
	stopEMF := e.Start(emfEvery)
	return func() {
		if err := stopEMF(); err != nil {
			m.warn("--emf: %v", err)
		}
		closeFile()
	}, nil
}

// servePrometheus serves Prometheus metrics at --metrics-addr until its stop.
func (m *metricsFlags) servePrometheus(src metrics.Source) (stop func(), err error) {
	l, err := net.Listen("tcp", m.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	stopServing := metrics.Serve(l, src, func(err error) {
		m.warn("--metrics-addr: serving %s stopped: %v", l.Addr(), err)
	})
	return func() {
		if err := stopServing(); err != nil {
			m.warn("--metrics-addr: stopping: %v", err)
		}
	}, nil
}
