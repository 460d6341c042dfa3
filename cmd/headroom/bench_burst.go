package main

import (
	"context"
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

func benchBurst(fs *pflag.FlagSet) runner {
	asJSON := fs.Bool("json", false, "print the rows as a JSON array")
	only := fs.String("strategy", "", "run one strategy, `NAME`: A, B, C, D, E or headroom (default: all, in that order)")
	n := fs.Int("requests", 90, "chat completions in the burst, all sent at the same instant")
	attempts := fs.Int("attempts", 10, "attempts each request may make before it gives up")
	window := fs.Duration("window", time.Minute, "the rate-limit minute: the simulator's window, or the endpoint's; shorter compresses time")
	endpoint := fs.String("endpoint", "", "measure this Azure OpenAI resource `URL` instead of the built-in simulator")
	rpm := fs.Int("rpm", 0, "the endpoint deployment's requests per minute (required with --endpoint)")
	keyEnv := fs.String("api-key-env", "AZURE_OPENAI_API_KEY", "environment `variable` that holds the endpoint's key")
	deployment := fs.String("deployment", "gpt-4o", "deployment `name` at the endpoint")
	apiVersion := fs.String("api-version", budget.DefaultAPIVersion, "api-version sent to the endpoint")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		fail := func(format string, args ...any) int {
			fprintf(stderr, "headroom bench burst: "+format+"\n", args...)
			return exitUsage
		}
		switch {
		case *n < 1:
			return fail("--requests must be at least 1")
		case *attempts < 1:
			return fail("--attempts must be at least 1")
		case *window < 60*time.Millisecond:
			return fail("--window %v is too short: use at least 60ms", *window)
		}

		strategies := burstStrategies()
		if *only != "" {
			i := slices.IndexFunc(strategies, func(s burst.Strategy) bool { return strings.EqualFold(s.Name, *only) })
			if i < 0 {
				names := make([]string, len(strategies))
				for j, s := range strategies {
					names[j] = s.Name
				}
				return fail("unknown strategy %q (have: %s)", *only, strings.Join(names, ", "))
			}
			strategies = strategies[i : i+1]
		}

		// With --endpoint every strategy shares one deployment; without it
		// each gets a fresh simulator.
		var remote *burst.Target
		if *endpoint != "" {
			u, err := url.Parse(*endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fail("--endpoint %q is not a resource URL such as https://NAME.openai.azure.com", *endpoint)
			}
			if *rpm < 1 {
				return fail("--endpoint needs --rpm, the deployment's requests per minute, for pacing and the floor")
			}
			key := os.Getenv(*keyEnv)
			if key == "" {
				return fail("$%s is empty: export the endpoint's key there, or name another variable with --api-key-env", *keyEnv)
			}
			remote = &burst.Target{
				Endpoint: strings.TrimRight(*endpoint, "/"), Deployment: *deployment, APIKey: key,
				APIVersion: *apiVersion, RPM: *rpm, Minute: *window, Client: burst.NewClient(),
			}
		} else {
			var stray []string
			fs.Visit(func(f *pflag.Flag) {
				switch f.Name {
				case "rpm", "api-key-env", "deployment", "api-version":
					stray = append(stray, "--"+f.Name)
				}
			})
			if len(stray) > 0 {
				return fail("%s: only with --endpoint; the built-in simulator serves gpt-4o at 60 RPM", strings.Join(stray, ", "))
			}
		}

		if remote != nil {
			fprintf(stderr, "headroom bench burst: %s, deployment %s at %d RPM, a %v minute\n", remote.Endpoint, remote.Deployment, remote.RPM, *window)
		} else {
			fprintf(stderr, "headroom bench burst: a fresh built-in simulator per strategy, gpt-4o at 60 RPM, a %v minute\n", *window)
		}
		rows := []burst.Row{}
		var ran []burst.Strategy // for the legend
		for _, s := range strategies {
			var target burst.Target
			stop := func() {}
			if remote != nil {
				if len(ran) > 0 {
					// The previous strategy's calls still count in the
					// endpoint's windows; let them pass.
					fprintf(stderr, "headroom bench burst: waiting %v for the endpoint's rate windows to clear…\n", *window)
					select {
					case <-time.After(*window + time.Second):
					case <-ctx.Done():
					}
				}
				target = *remote
			} else {
				var err error
				if target, stop, err = burst.Simulated(ctx, *window); err != nil {
					return failed(ctx, stderr, "bench burst", err)
				}
			}
			if ctx.Err() != nil {
				stop()
				break
			}
			fprintf(stderr, "headroom bench burst: %s (%s): %d requests at once, up to %d attempts each, %d RPM…\n",
				s.Name, s.Desc, *n, *attempts, target.RPM)
			row := s.Run(ctx, target, *n, *attempts)
			stop()
			if ctx.Err() != nil {
				break
			}
			fprintf(stderr, "headroom bench burst: %s: %d/%d completed in %.1f s\n", row.Strategy, row.Completed, *n, row.WallS)
			if row.Completed == 0 && row.RateLimited == 0 {
				fprintf(stderr, "headroom bench burst: %s: nothing completed and nothing was throttled: check --endpoint, --deployment, --api-version and the key\n", row.Strategy)
			}
			rows = append(rows, row)
			ran = append(ran, s)
		}

		if *asJSON {
			if code := printJSON(stdout, rows); code != exitOK {
				return code
			}
		} else if len(rows) > 0 {
			burst.Print(stdout, rows)
			fprintf(stdout, "\n")
			for _, s := range ran {
				fprintf(stdout, "%-8s  %s\n", s.Name, s.Desc)
			}
			if *window != time.Minute {
				fprintf(stdout, "\ntime compressed: a %v minute; times are real seconds, effective RPM counts per %v\n", *window, *window)
			}
		}
		if ctx.Err() != nil {
			fprintf(stderr, "headroom bench burst: interrupted\n")
			return agent.ExitCode(ctx, "", ctx.Err())
		}
		return exitOK
	}
}
