package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/doctor"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm"
)

// budgetDoctor checks a config before a fleet starts, and with --probe
// asks each deployment what it allows and serves. Exit 0: nothing to fix
// (infos do not count); 1: a warning or an error; 2: a config that does
// not load, or bad usage.
func budgetDoctor(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` to check (default $HEADROOM_CONFIG)")
	probe := fs.Bool("probe", false, "send one tiny chat completion to each deployment (outside the budget) and compare its limits and model with the config")
	timeout := fs.Duration("timeout", doctor.DefaultTimeout, "how long each probe may take")
	asJSON := fs.Bool("json", false, `print {"findings": [...], "probed": [...]} instead of a list`)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		// Its warnings are findings of its own, not printed apart.
		f, file, warnings, err := config.Read(*configFile)
		if err == nil && file == "" {
			return failed(ctx, stderr, "budget doctor", agent.Usage(fmt.Errorf("no config to check: pass --config FILE or set $%s", config.Env)))
		}
		if err == nil {
			// The call-type overrides a fleet would apply at start.
			err = f.Apply(calltypes.Default())
		}
		if err != nil {
			return failed(ctx, stderr, "budget doctor", agent.Usage(err))
		}
		o := doctor.Options{Warnings: warnings, Timeout: *timeout}
		if *probe {
			fprintf(stderr, "headroom budget doctor: probing the config's deployments, one tiny call each (%d)\n", len(f.Budget.Deployments))
			o.Probe = func(ctx context.Context, d budget.Deployment) (doctor.Answer, error) {
				r, err := llm.Probe(ctx, d, llm.ProbeOptions{})
				return doctor.Answer{Status: r.Status, Header: r.Header, Model: r.Model, Code: r.Code, Message: r.Message, Latency: r.Latency}, err
			}
		}
		report := doctor.Check(ctx, f, o)
		if ctx.Err() != nil {
			return failed(ctx, stderr, "budget doctor", errInterrupted)
		}
		if *asJSON {
			if code := printJSON(stdout, report); code != exitOK {
				return code
			}
		} else if err := report.WriteText(stdout); err != nil {
			return failed(ctx, stderr, "budget doctor", err)
		}
		if report.Failed() {
			return reported(ctx, "a finding failed")
		}
		return exitOK
	}
}
