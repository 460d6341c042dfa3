package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/calibrate"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/llm"
)

// budgetCalibrate measures, with a few cheap calls to each deployment,
// whether Azure gives back the unused part of its admission estimate
// inside the window (refund: refund) or holds it (refund: hold), how its
// charge compares with headroom's estimate, and the dispatch lag. Exit 0:
// every deployment calibrated; 1: one could not be; 2: bad usage or a
// config that does not load.
func budgetCalibrate(fs *pflag.FlagSet) runner {
	cf := &calibrateFlags{}
	fs.StringVar(&cf.configFile, "config", "", "config `file` naming the deployments (default $HEADROOM_CONFIG)")
	fs.StringVar(&cf.only, "deployment", "", "calibrate only the deployment of this `name`")
	fs.DurationVar(&cf.timeout, "timeout", calibrate.DefaultTimeout, "how long each call may take")
	fs.BoolVar(&cf.asJSON, "json", false, `print [{"deployment", "released", "recommendation", "estimate_ratio", "dispatch_lag_ms_p99", "evidence"}] instead of a table`)
	return cf.run
}

// calibrateFlags holds the values of budget calibrate's flags.
type calibrateFlags struct {
	configFile string
	only       string
	timeout    time.Duration
	asJSON     bool
}

func (cf *calibrateFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if cf.timeout <= 0 {
		return failed(ctx, stderr, "budget calibrate", agent.Usage(fmt.Errorf("--timeout %v: use a duration above zero, such as 20s", cf.timeout)))
	}
	f, file, err := fleetConfig("budget calibrate", cf.configFile, stderr)
	if err != nil {
		return failed(ctx, stderr, "budget calibrate", err)
	}
	ds, err := cf.deployments(f.Budget.Deployments, file)
	if err != nil {
		return failed(ctx, stderr, "budget calibrate", err)
	}
	to := ds[0].Name
	if len(ds) > 1 {
		to = "each of " + plural.Of(len(ds), "deployment")
	}
	fprintf(stderr, "headroom budget calibrate: %d calls to %s (%d of them capped at up to %d tokens, %d carrying a 512-px image), outside the budget\n",
		2*calibrate.Samples+2+calibrate.ImageCalls, to, calibrate.Samples, calibrate.DefaultMaxTokens, calibrate.ImageSamples)
	results := calibrate.Run(ctx, ds, cf.options(f.Budget.Window, stderr))
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return failed(ctx, stderr, "budget calibrate", errInterrupted)
	}
	if cf.asJSON {
		if code := printJSON(stdout, results); code != exitOK {
			return code
		}
	} else if err := calibrate.WriteText(stdout, results, calibrate.Config{Name: file, Refund: f.Budget.Refund, Margin: f.Budget.Margin}); err != nil {
		return failed(ctx, stderr, "budget calibrate", err)
	}
	for _, r := range results {
		if r.Failed() {
			return reported(ctx, "a deployment's calibration failed")
		}
	}
	return exitOK
}

// deployments picks the deployment --deployment names, or all of them.
func (cf *calibrateFlags) deployments(ds []budget.Deployment, file string) ([]budget.Deployment, error) {
	if cf.only == "" {
		return ds, nil
	}
	var names []string
	var picked []budget.Deployment
	for _, d := range ds {
		names = append(names, d.Name)
		if d.Name == cf.only {
			picked = append(picked, d)
		}
	}
	if len(picked) == 0 {
		return nil, agent.Usage(fmt.Errorf("--deployment %q: %s has no such deployment (have: %s)", cf.only, file, strings.Join(names, ", ")))
	}
	return picked, nil
}

// options makes the calibration's calls straight to the deployments,
// outside the budget.
func (cf *calibrateFlags) options(window time.Duration, stderr io.Writer) calibrate.Options {
	client := &http.Client{} // one, so the calls after the first reuse its connection
	return calibrate.Options{
		Window:  window,
		Timeout: cf.timeout,
		Logf: func(format string, args ...any) {
			fprintf(stderr, "headroom budget calibrate: "+format+"\n", args...)
		},
		Exchange: func(ctx context.Context, d budget.Deployment, maxTokens int64) (calibrate.Answer, error) {
			r, err := llm.ProbeCompletion(ctx, d, maxTokens, llm.ProbeOptions{HTTPClient: client})
			return answerOf(r), err
		},
		ImageExchange: func(ctx context.Context, d budget.Deployment, _ int64) (calibrate.Answer, error) {
			r, err := llm.ProbeImageCompletion(ctx, d, llm.ProbeOptions{HTTPClient: client})
			return answerOf(r), err
		},
	}
}

// answerOf is a probe's answer as calibrate reads it.
func answerOf(r llm.CompletionResult) calibrate.Answer {
	return calibrate.Answer{Status: r.Status, Header: r.Header, Code: r.Code, Message: r.Message,
		Used: r.TotalTokens, Estimate: r.Estimate, Lag: r.Lag, Latency: r.Latency, ImageTokens: r.ImageTokens}
}
