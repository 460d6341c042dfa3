package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/top"
)

// budgetTop shows the shared store live, per deployment: what the whole
// fleet holds, not what this process does (it holds nothing).
func budgetTop(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` naming the deployments and the store (default $HEADROOM_CONFIG)")
	interval := fs.Duration("interval", time.Second, "how often to read the store")
	once := fs.Bool("once", false, "print one frame as plain text to stdout and exit, leaving the terminal alone")
	width := fs.Int("width", top.DefaultWidth, "`columns` of the --once frame")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *interval <= 0 {
			return failed(ctx, stderr, "budget top", agent.Usage(fmt.Errorf("--interval %v: use a duration above zero, such as 1s", *interval)))
		}
		if *width < 1 {
			return failed(ctx, stderr, "budget top", agent.Usage(fmt.Errorf("--width %d: use 1 column or more", *width)))
		}
		f, file, err := fleetConfig("budget top", *configFile, stderr)
		if err != nil {
			return failed(ctx, stderr, "budget top", err)
		}
		cfg := &f.Budget // validated by the load
		note := ""
		if addr, err := cfg.RedisURL(); err == nil && addr == "" {
			note = "This config names no Redis (redis: or redis_env:): the store is this process's own, and no agent writes to it."
			fprintf(stderr, "headroom budget top: the config names no Redis (redis: or redis_env:), so the store is this process's own: no agent writes to it, and the view stays empty\n")
		}
		router, closeStore, err := storeRouter(ctx, cfg)
		if code := topStoreError(ctx, err, true, stderr); code != exitOK {
			return code
		}
		defer closeStore()
		o := top.Options{Name: file, Note: note, Window: cfg.Window}

		if *once {
			d, err := router.Dashboard(ctx)
			if code := topStoreError(ctx, err, false, stderr); code != exitOK {
				return code
			}
			o.Width = *width
			fprintf(stdout, "%s", top.Text(top.Render(d, d.At, o)))
			return exitOK
		}

		s, err := tcell.NewScreen()
		if err != nil {
			return failed(ctx, stderr, "budget top", agent.Usage(fmt.Errorf("no terminal to draw on (%v); --once prints one frame as text", err)))
		}
		err = top.Run(ctx, s, router.Dashboard, o, *interval)
		if err == nil || ctx.Err() != nil {
			// q, Ctrl-C, or SIGINT/SIGTERM: each is how a watch ends.
			return exitOK
		}
		// By the one table: a store gone is the budget's exit code.
		return topStoreError(ctx, err, false, stderr)
	}
}

// topStoreError reports an error opening or reading the store and returns
// its exit code by the one table (agent.ExitCode): exitOK for none, the
// budget's for a store that cannot be reached, 130 when interrupted; any
// other error opening the store is the config's (bad usage), and reading
// it, a failure.
func topStoreError(ctx context.Context, err error, opening bool, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, budget.ErrUnavailable):
		fprintf(stderr, "headroom budget top: the budget store (Redis) the config names cannot be reached: %v\n", err)
		return agent.ExitCode(ctx, "", err)
	case opening && ctx.Err() == nil:
		err = agent.Usage(err)
	}
	fprintf(stderr, "headroom budget top: %v\n", err)
	return agent.ExitCode(ctx, "", err)
}
