package burst

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Options are a run of strategies one after another.
type Options struct {
	Requests int // the burst: requests at once
	Attempts int // each request's attempts at most
	// Window is the built-in simulator's minute (a shorter one
	// compresses time); Remote, when set, is the deployment every
	// strategy shares instead of a fresh simulator each.
	Window   time.Duration
	Remote   *Target
	Progress io.Writer // told as each strategy starts and ends; nil for none
}

// RunAll runs the strategies in turn, each against a fresh simulator or
// the shared Remote, whose windows it lets clear between strategies. An
// interrupt ends it with the rows so far; ran are the strategies that
// finished, in order, for the legend.
func RunAll(ctx context.Context, strategies []Strategy, o Options) (rows []Row, ran []Strategy, err error) {
	say := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "headroom bench burst: "+format+"\n", args...)
		}
	}
	rows = []Row{}
	for _, s := range strategies {
		target, stop, err := o.target(ctx, len(ran) > 0, say)
		if err != nil {
			return nil, nil, err
		}
		if ctx.Err() != nil {
			stop()
			break
		}
		say("%s (%s): %d requests at once, up to %d attempts each, %d RPM…", s.Name, s.Desc, o.Requests, o.Attempts, target.RPM)
		row := s.Run(ctx, target, o.Requests, o.Attempts)
		stop()
		if ctx.Err() != nil {
			break
		}
		say("%s: %d/%d completed in %.1f s", row.Strategy, row.Completed, o.Requests, row.WallS)
		if row.Completed == 0 && row.RateLimited == 0 {
			say("%s: nothing completed and nothing was throttled: check --endpoint, --deployment, --api-version and the key", row.Strategy)
		}
		rows = append(rows, row)
		ran = append(ran, s)
	}
	return rows, ran, nil
}

// target is what the next strategy runs against, and how to stop it: a
// fresh simulator, or the shared endpoint once the strategy before has
// left its windows.
func (o Options) target(ctx context.Context, after bool, say func(string, ...any)) (Target, func(), error) {
	if o.Remote == nil {
		return Simulated(ctx, o.Window)
	}
	if after {
		// The previous strategy's calls still count in the endpoint's
		// windows; let them pass.
		say("waiting %v for the endpoint's rate windows to clear…", o.Window)
		sleep(ctx, o.Window+time.Second)
	}
	return *o.Remote, func() {}, nil
}
