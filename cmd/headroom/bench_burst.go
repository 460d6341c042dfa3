package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/burst"
	"github.com/headroom-agent/headroom/budget"
)

// burstStrategies are the strategies bench burst runs, in order: the
// baselines, then headroom's own.
func burstStrategies() []burst.Strategy { return append(burst.Baselines(), burst.Headroom()) }

// burstFlags are bench burst's flags.
type burstFlags struct {
	fs         *pflag.FlagSet
	asJSON     bool
	only       string
	n          int
	attempts   int
	window     time.Duration
	endpoint   string
	rpm        int
	keyEnv     string
	deployment string
	apiVersion string
}

func benchBurst(fs *pflag.FlagSet) runner {
	f := &burstFlags{fs: fs}
	fs.BoolVar(&f.asJSON, "json", false, "print the rows as a JSON array")
	fs.StringVar(&f.only, "strategy", "", "run one strategy, `NAME`: A, B, C, D, E or headroom (default: all, in that order)")
	fs.IntVar(&f.n, "requests", 90, "chat completions in the burst, all sent at the same instant")
	fs.IntVar(&f.attempts, "attempts", 10, "attempts each request may make before it gives up")
	fs.DurationVar(&f.window, "window", time.Minute, "the rate-limit minute: the simulator's window, or the endpoint's; shorter compresses time")
	fs.StringVar(&f.endpoint, "endpoint", "", "measure this Azure OpenAI resource `URL` instead of the built-in simulator")
	fs.IntVar(&f.rpm, "rpm", 0, "the endpoint deployment's requests per minute (required with --endpoint)")
	fs.StringVar(&f.keyEnv, "api-key-env", "AZURE_OPENAI_API_KEY", "environment `variable` that holds the endpoint's key")
	fs.StringVar(&f.deployment, "deployment", "gpt-4o", "deployment `name` at the endpoint")
	fs.StringVar(&f.apiVersion, "api-version", budget.DefaultAPIVersion, "api-version sent to the endpoint")
	return f.run
}

func (f *burstFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	strategies, remote, err := f.prepare()
	if err != nil {
		fprintf(stderr, "headroom bench burst: %v\n", err)
		return exitUsage
	}
	if remote != nil {
		fprintf(stderr, "headroom bench burst: %s, deployment %s at %d RPM, a %v minute\n", remote.Endpoint, remote.Deployment, remote.RPM, f.window)
	} else {
		fprintf(stderr, "headroom bench burst: a fresh built-in simulator per strategy, gpt-4o at 60 RPM, a %v minute\n", f.window)
	}
	rows, ran, err := burst.RunAll(ctx, strategies, burst.Options{Requests: f.n, Attempts: f.attempts, Window: f.window, Remote: remote, Progress: stderr})
	if err != nil {
		return failed(ctx, stderr, "bench burst", err)
	}
	if code := f.print(stdout, rows, ran); code != exitOK {
		return code
	}
	if ctx.Err() != nil {
		fprintf(stderr, "headroom bench burst: interrupted\n")
		return agent.ExitCode(ctx, "", ctx.Err())
	}
	return exitOK
}

// prepare checks the flags and returns the strategies to run and, with
// --endpoint, the deployment they share; an error is bad usage.
func (f *burstFlags) prepare() ([]burst.Strategy, *burst.Target, error) {
	switch {
	case f.n < 1:
		return nil, nil, errors.New("--requests must be at least 1")
	case f.attempts < 1:
		return nil, nil, errors.New("--attempts must be at least 1")
	case f.window < 60*time.Millisecond:
		return nil, nil, fmt.Errorf("--window %v is too short: use at least 60ms", f.window)
	}

	strategies := burstStrategies()
	if f.only != "" {
		i := slices.IndexFunc(strategies, func(s burst.Strategy) bool { return strings.EqualFold(s.Name, f.only) })
		if i < 0 {
			names := make([]string, len(strategies))
			for j, s := range strategies {
				names[j] = s.Name
			}
			return nil, nil, fmt.Errorf("unknown strategy %q (have: %s)", f.only, strings.Join(names, ", "))
		}
		strategies = strategies[i : i+1]
	}
	remote, err := f.remote()
	return strategies, remote, err
}

// remote is the deployment --endpoint names, or nil for the built-in
// simulator.
func (f *burstFlags) remote() (*burst.Target, error) {
	// With --endpoint every strategy shares one deployment; without it
	// each gets a fresh simulator.
	if f.endpoint == "" {
		var stray []string
		f.fs.Visit(func(fl *pflag.Flag) {
			switch fl.Name {
			case "rpm", "api-key-env", "deployment", "api-version":
				stray = append(stray, "--"+fl.Name)
			}
		})
		if len(stray) > 0 {
			return nil, fmt.Errorf("%s: only with --endpoint; the built-in simulator serves gpt-4o at 60 RPM", strings.Join(stray, ", "))
		}
		return nil, nil
	}
	u, err := url.Parse(f.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--endpoint %q is not a resource URL such as https://NAME.openai.azure.com", f.endpoint)
	}
	if f.rpm < 1 {
		return nil, errors.New("--endpoint needs --rpm, the deployment's requests per minute, for pacing and the floor")
	}
	key := os.Getenv(f.keyEnv)
	if key == "" {
		return nil, fmt.Errorf("$%s is empty: export the endpoint's key there, or name another variable with --api-key-env", f.keyEnv)
	}
	return &burst.Target{
		Endpoint: strings.TrimRight(f.endpoint, "/"), Deployment: f.deployment, APIKey: key,
		APIVersion: f.apiVersion, RPM: f.rpm, Minute: f.window, Client: burst.NewClient(),
	}, nil
}

// print writes the rows, as JSON or as a table with a legend.
func (f *burstFlags) print(stdout io.Writer, rows []burst.Row, ran []burst.Strategy) int {
	if f.asJSON {
		return printJSON(stdout, rows)
	}
	if len(rows) > 0 {
		burst.Print(stdout, rows)
		fprintf(stdout, "\n")
		for _, s := range ran {
			fprintf(stdout, "%-8s  %s\n", s.Name, s.Desc)
		}
		if f.window != time.Minute {
			fprintf(stdout, "\ntime compressed: a %v minute; times are real seconds, effective RPM counts per %v\n", f.window, f.window)
		}
	}
	return exitOK
}
