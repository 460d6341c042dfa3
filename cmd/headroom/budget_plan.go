package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget/plan"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
)

// budgetPlan sizes a fleet from its config: how many agents its budget
// feeds and how fast to start them, with the call types' caps and with a
// flat one, from a model of an agent's calls or from runs' results.
func budgetPlan(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` whose deployments to plan on (default $HEADROOM_CONFIG); credentials may be left out")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	mixFlag := fs.String("mix", "click-pick", "the calls an agent makes a step: click-pick (one a step), agent (headroom's own: plan, pick, check, summary), or `TYPE[:CALLS],...`")
	prompt := fs.Int64("prompt-tokens", plan.DefaultPromptTokens, "the prompt estimate every call is charged, in `tokens`")
	spm := fs.Float64("steps-per-minute", plan.DefaultStepsPerMinute, "an agent's pace; with --runs, given only to retime the runs to it (they keep their own pace otherwise)")
	runs := fs.String("runs", "", "measure the mix, the charges and the pace from the result.json files under this `directory` (at any depth), planning at the p99")
	flat := fs.Int64("flat-cap", plan.DefaultFlatCap, "the flat max_tokens to compare the types' caps with")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		fail := func(format string, a ...any) int {
			return failed(ctx, stderr, "budget plan", agent.Usage(fmt.Errorf(format, a...)))
		}
		set := map[string]bool{}
		fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
		switch {
		case *runs != "" && set["mix"]:
			return fail("--mix and --runs do not go together: the runs give the mix")
		case *runs != "" && set["prompt-tokens"]:
			return fail("--prompt-tokens and --runs do not go together: the runs give each call's charge")
		case *prompt < 1:
			return fail("--prompt-tokens %d: a prompt is charged at least a token", *prompt)
		case !(*spm > 0):
			return fail("--steps-per-minute %v: an agent's pace is above 0", *spm)
		case *flat <= 0:
			return fail("--flat-cap %d: a cap is at least 1 token", *flat)
		}

		*configFile = config.Path(*configFile)
		if *configFile == "" {
			return fail("no config: a plan divides the deployments' limits, so give --config FILE (or set $HEADROOM_CONFIG)")
		}
		f, warnings, err := plan.LoadConfig(*configFile)
		if err != nil {
			return fail("%v", err)
		}
		for _, w := range warnings {
			fprintf(stderr, "headroom budget plan: warning: %s\n", w)
		}
		types := calltypes.Default()
		if err := f.Apply(types); err != nil {
			return fail("%v", err)
		}
		b, err := plan.BudgetOf(&f.Budget)
		if err != nil {
			return fail("%s: %v", *configFile, err)
		}

		o := plan.Options{PromptTokens: *prompt, StepsPerMinute: *spm, FlatCap: *flat}
		var p *plan.Plan
		if *runs != "" {
			rs, err := plan.ReadRuns(*runs)
			if rs != nil {
				for _, s := range rs.Skipped {
					fprintf(stderr, "headroom budget plan: skipped %s: %s\n", s.File, s.Reason)
				}
			}
			if err != nil {
				return fail("--runs %v", err)
			}
			if !set["steps-per-minute"] {
				o.StepsPerMinute = 0 // the runs' own pace
			}
			p, err = plan.FromRuns(b, rs, o)
			if err != nil {
				return fail("%v", err)
			}
		} else {
			mix, err := plan.ParseMix(*mixFlag)
			if err != nil {
				return fail("--mix: %v", err)
			}
			p, err = plan.Model(b, types, mix, o)
			if err != nil {
				return fail("--mix: %v", err)
			}
		}
		if *asJSON {
			return printJSON(stdout, p)
		}
		if err := plan.Print(stdout, p); err != nil {
			return failed(ctx, stderr, "budget plan", err)
		}
		return exitOK
	}
}
