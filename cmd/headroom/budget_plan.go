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
	pf := &planFlags{fs: fs}
	fs.StringVar(&pf.configFile, "config", "", "config `file` whose deployments to plan on (default $HEADROOM_CONFIG); credentials may be left out")
	fs.BoolVar(&pf.asJSON, "json", false, "print the plan as JSON")
	fs.StringVar(&pf.mix, "mix", "click-pick", "the calls an agent makes a step: click-pick (one a step), agent (headroom's own: plan, pick, check, summary), or `TYPE[:CALLS],...`")
	fs.Int64Var(&pf.prompt, "prompt-tokens", plan.DefaultPromptTokens, "the prompt estimate every call is charged, in `tokens`")
	fs.Float64Var(&pf.spm, "steps-per-minute", plan.DefaultStepsPerMinute, "an agent's pace; with --runs, given only to retime the runs to it (they keep their own pace otherwise)")
	fs.StringVar(&pf.runs, "runs", "", "measure the mix, the charges and the pace from the result.json files under this `directory` (at any depth), planning at the p99")
	fs.Int64Var(&pf.flat, "flat-cap", plan.DefaultFlatCap, "the flat max_tokens to compare the types' caps with")
	return pf.run
}

// planFlags holds the values of budget plan's flags, and the set they were
// parsed into: some flags mean something only when given.
type planFlags struct {
	fs         *pflag.FlagSet
	configFile string
	asJSON     bool
	mix        string
	prompt     int64
	spm        float64
	runs       string
	flat       int64
}

func (pf *planFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	set := map[string]bool{}
	pf.fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	p, err := pf.plan(set, stderr)
	if err != nil {
		return failed(ctx, stderr, "budget plan", agent.Usage(err))
	}
	if pf.asJSON {
		return printJSON(stdout, p)
	}
	if err := plan.Print(stdout, p); err != nil {
		return failed(ctx, stderr, "budget plan", err)
	}
	return exitOK
}

// plan checks the flags, loads the config and makes the plan, from the runs
// or from the mix; its errors are all usage errors.
func (pf *planFlags) plan(set map[string]bool, stderr io.Writer) (*plan.Plan, error) {
	if err := pf.check(set); err != nil {
		return nil, err
	}
	b, types, err := pf.loadBudget(stderr)
	if err != nil {
		return nil, err
	}
	o := plan.Options{PromptTokens: pf.prompt, StepsPerMinute: pf.spm, FlatCap: pf.flat}
	if pf.runs == "" {
		mix, err := plan.ParseMix(pf.mix)
		if err != nil {
			return nil, fmt.Errorf("--mix: %v", err)
		}
		p, err := plan.Model(b, types, mix, o)
		if err != nil {
			return nil, fmt.Errorf("--mix: %v", err)
		}
		return p, nil
	}
	rs, err := plan.ReadRuns(pf.runs)
	if rs != nil {
		for _, s := range rs.Skipped {
			fprintf(stderr, "headroom budget plan: skipped %s: %s\n", s.File, s.Reason)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--runs %v", err)
	}
	if !set["steps-per-minute"] {
		o.StepsPerMinute = 0 // the runs' own pace
	}
	p, err := plan.FromRuns(b, rs, o)
	if err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	return p, nil
}

// check refuses the flags that contradict each other or are out of range.
func (pf *planFlags) check(set map[string]bool) error {
	switch {
	case pf.runs != "" && set["mix"]:
		return fmt.Errorf("--mix and --runs do not go together: the runs give the mix")
	case pf.runs != "" && set["prompt-tokens"]:
		return fmt.Errorf("--prompt-tokens and --runs do not go together: the runs give each call's charge")
	case pf.prompt < 1:
		return fmt.Errorf("--prompt-tokens %d: a prompt is charged at least a token", pf.prompt)
	case !(pf.spm > 0):
		return fmt.Errorf("--steps-per-minute %v: an agent's pace is above 0", pf.spm)
	case pf.flat <= 0:
		return fmt.Errorf("--flat-cap %d: a cap is at least 1 token", pf.flat)
	}
	return nil
}

// loadBudget reads the config's budget and its call types, telling its
// warnings on stderr.
func (pf *planFlags) loadBudget(stderr io.Writer) (plan.Budget, *calltypes.Registry, error) {
	pf.configFile = config.Path(pf.configFile)
	if pf.configFile == "" {
		return plan.Budget{}, nil, fmt.Errorf("no config: a plan divides the deployments' limits, so give --config FILE (or set $HEADROOM_CONFIG)")
	}
	f, warnings, err := plan.LoadConfig(pf.configFile)
	if err != nil {
		return plan.Budget{}, nil, fmt.Errorf("%v", err)
	}
	for _, w := range warnings {
		fprintf(stderr, "headroom budget plan: warning: %s\n", w)
	}
	types := calltypes.Default()
	if err := f.Apply(types); err != nil {
		return plan.Budget{}, nil, fmt.Errorf("%v", err)
	}
	b, err := plan.BudgetOf(&f.Budget)
	if err != nil {
		return plan.Budget{}, nil, fmt.Errorf("%s: %v", pf.configFile, err)
	}
	return b, types, nil
}
