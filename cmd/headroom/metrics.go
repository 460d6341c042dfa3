package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

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
		var v metrics.View
		if c.Dispatcher != nil {
			d, err := c.Dispatcher.Router().Dashboard(ctx)
			if err != nil {
				return v, err
			}
			v.Dashboard = d
		} else {
			v.At, v.Agents = time.Now(), -1
		}
		for name, s := range c.Stats() {
			v.Types = append(v.Types, metrics.Type{Name: name, Calls: s.Calls, TokensReserved: s.TokensReserved, TokensUsed: s.TokensUsed})
		}
		return v, nil
	}
}

// start begins the sinks the flags ask for; stop (safe to call twice)
// writes the last EMF lines and stops serving. An error is bad usage (a
// file that cannot be written, an address that cannot be bound).
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
		w := stdout
		if m.emf != "-" {
			if err := safefile.PrepareTarget(m.emf); err != nil {
				return stop, fmt.Errorf("--emf: %w", err)
			}
			f, err := safefile.OpenAppend(m.emf, 0o644)
			if err != nil {
				return stop, fmt.Errorf("--emf: %w", err)
			}
			stops = append(stops, func() { f.Close() })
			w = f
		}
		e := metrics.NewEMF(w, src)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = e.Run(ctx, emfEvery)
		}()
		stops = append(stops, func() { cancel(); <-done })
	}
	if m.addr != "" {
		l, err := net.Listen("tcp", m.addr)
		if err != nil {
			stop()
			return func() {}, fmt.Errorf("--metrics-addr: %w", err)
		}
		srv := &http.Server{Handler: metrics.Handler(metrics.NewCollector(src, 2*time.Second)), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(l) }() // ends with Shutdown
		stops = append(stops, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
	}
	return stop, nil
}
