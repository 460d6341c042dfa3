package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/learn"
	"github.com/headroom-agent/headroom/internal/testsite"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// benchLearn measures learned runs: each testdata task with a success
// check run by the model and replayed, the shop's variants, and a fleet
// on one template with learning on and off.
func benchLearn(fs *pflag.FlagSet) runner {
	tasks := fs.String("tasks", "testdata/tasks", "the `directory` of task files; those with a success check are measured")
	runs := fs.Int("runs", 3, "runs with the model and learned runs per task; the median of each by wall time is reported")
	agents := fs.Int("agents", 50, "agents in the fleet row (0: no fleet row)")
	parallel := fs.Int("parallel", 8, "the fleet's browsers at once")
	redisURL := new(string)
	benchRedisFlag(fs, redisURL, "the Redis `URL` the fleet shares", "")
	latency := fs.Duration("model-latency", 500*time.Millisecond, "the stand-in answers after this long, plus --model-per-token a token: a deployed model's pace, so run 1's wall time holds the model's (0 and 0: the stand-in's own speed)")
	perToken := fs.Duration("model-per-token", 12*time.Millisecond, "the stand-in's time per generated token")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	var bf browserFlags
	bf.addBrowser(fs)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
		if _, err := bf.load(); err != nil {
			return failed(ctx, stderr, "bench learn", agent.Usage(err))
		}
		// The portal's tasks sign in with the test site's own account,
		// which their recordings hold; other tasks bring their own.
		for k, v := range map[string]string{"PORTAL_USER": testsite.PortalUser, "PORTAL_PASSWORD": testsite.PortalPassword} {
			if os.Getenv(k) == "" {
				os.Setenv(k, v)
			}
		}
		if *latency < 0 || *perToken < 0 {
			return failed(ctx, stderr, "bench learn", agent.Usage(fmt.Errorf("--model-latency and --model-per-token are at least 0")))
		}
		o := learn.Options{Tasks: *tasks, Runs: *runs, Browser: bf.options(stderr), Pace: azuresim.Faults{Latency: *latency, LatencyPerToken: *perToken},
			Progress: func(format string, args ...any) { fprintf(stderr, "headroom bench learn: "+format+"\n", args...) }}
		rows, err := learn.Measure(ctx, o)
		if err != nil {
			return failed(ctx, stderr, "bench learn", err)
		}
		variants, err := learn.MeasureVariants(ctx, o)
		if err != nil {
			return failed(ctx, stderr, "bench learn", err)
		}
		var fleet []learn.FleetRow
		if *agents > 0 {
			fo := learn.FleetOptions{Options: o, Agents: *agents, Parallel: *parallel, Stagger: 20 * time.Millisecond,
				Redis: benchRedis(*redisURL)}
			if fleet, err = learn.MeasureFleet(ctx, fo); err != nil {
				return failed(ctx, stderr, "bench learn", err)
			}
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"tasks": rows, "variants": variants, "fleet": fleet})
		}
		writeLearnTables(stdout, rows, variants, fleet)
		return exitOK
	}
}

func writeLearnTables(w io.Writer, rows []learn.Run, variants []learn.VariantRun, fleet []learn.FleetRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\trun\tstatus\tcalls\ttokens\tsummary\treplayed\tasked\twall s\twall/run 1\t")
	var first learn.Run
	for _, r := range rows {
		if r.Run == "model" {
			first = r
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t\n", r.Task, r.Run, r.Status, r.Calls, r.Tokens, r.Summary, r.Replayed, r.Asked,
			float64(r.WallMS)/1000, ratio(r.WallMS, first.WallMS))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\trun\tstatus\tcalls\ttokens\treplayed\tasked\tmiss\tstored\twall s\tfalse successes\t")
	for _, v := range variants {
		for _, r := range []learn.Run{v.Learned, v.Changed, v.Healed} {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%.2f\t%d\t\n", v.Variant, r.Run, r.Status, r.Calls, r.Tokens, r.Replayed, r.Asked,
				cmp.Or(r.Miss, "-"), cmp.Or(r.Stored, "-"), float64(r.WallMS)/1000, v.FalseSuccesses)
		}
	}
	tw.Flush()
	if len(fleet) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fleet\tlearning\tsucceeded\tasked the model\tstep tokens\tsummary calls\tall tokens\twall s\twaited s (sum)\t")
	for _, f := range fleet {
		fmt.Fprintf(tw, "%d agents\t%v\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t\n", f.Agents, f.Learning, f.Succeeded, f.Asked, f.Tokens, f.Summary, f.AllTokens, float64(f.WallMS)/1000, float64(f.WaitedMS)/1000)
	}
	tw.Flush()
}
