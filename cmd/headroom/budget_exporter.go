package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
)

// budgetExporter serves the whole fleet's metrics from the shared store,
// for one long-lived scrape target; it makes no calls and counts as no
// agent.
func budgetExporter(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` naming the deployments and the store (default $HEADROOM_CONFIG)")
	addr := fs.String("addr", ":9464", "serve the fleet's Prometheus metrics at http://`ADDR`/metrics")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		const cmd = "budget exporter"
		f, file, err := fleetConfig(cmd, *configFile, stderr)
		if err != nil {
			return failed(ctx, stderr, cmd, err)
		}
		if addr, err := f.Budget.RedisURL(); err == nil && addr == "" {
			fprintf(stderr, "headroom %s: the config names no Redis (redis: or redis_env:), so the store is this process's own: no agent writes to it, and the figures stay empty\n", cmd)
		}
		e := metrics.NewExporter(&f.Budget)
		defer e.Close()
		octx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = e.Open(octx)
		cancel()
		switch {
		case errors.Is(err, budget.ErrUnavailable):
			fprintf(stderr, "headroom %s: the budget store (Redis) cannot be reached yet: %v; serving headroom_store_up 0 and trying again at each scrape\n", cmd, err)
		case err != nil:
			return failed(ctx, stderr, cmd, agent.Usage(err))
		}
		l, err := net.Listen("tcp", *addr)
		if err != nil {
			return failed(ctx, stderr, cmd, agent.Usage(fmt.Errorf("--addr: %w", err)))
		}
		serveErr := make(chan error, 1)
		stop := metrics.Serve(l, e.Source(), func(err error) { serveErr <- err })
		fprintf(stderr, "headroom %s: serving the fleet of %s (%d deployments) at http://%s/metrics\n", cmd, file, len(f.Budget.Deployments), l.Addr())
		select {
		case <-ctx.Done():
			if err := stop(); err != nil {
				fprintf(stderr, "headroom %s: stopping: %v\n", cmd, err)
			}
			return exitOK // SIGINT or SIGTERM is how a service ends
		case err := <-serveErr:
			stop()
			return failed(ctx, stderr, cmd, fmt.Errorf("serving %s stopped: %w", l.Addr(), err))
		}
	}
}
