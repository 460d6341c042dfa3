package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/headroom-agent/headroom/internal/plural"
)

// Print writes the plan as a table for people: the budget, the charges
// by type, then the figures with the types' caps and with the flat cap
// side by side.
func Print(w io.Writer, p *Plan) error {
	b := p.Budget
	keys := make([]string, len(b.Quotas))
	for i, q := range b.Quotas {
		keys[i] = strings.Join(q.Deployments, "+")
	}
	fmt.Fprintf(w, "budget: %d TPM × margin %g = %.0f tokens a minute, %d RPM, over %s (%s)\n",
		b.TPM(), b.Margin, b.TokensPerMinute(), b.RPM(), plural.Of(len(b.Quotas), "quota"), strings.Join(keys, ", "))
	if r := p.Runs; r != nil {
		fmt.Fprintf(w, "runs: %s under %s", plural.Of(r.Runs, "run"), r.Dir)
		if len(r.Skipped) > 0 {
			fmt.Fprintf(w, " (%s skipped)", plural.Of(len(r.Skipped), "file"))
		}
		fmt.Fprintf(w, ", %.1f steps a minute as run", r.MeasuredStepsPerMinute)
		if r.Retimed {
			fmt.Fprintf(w, ", retimed to %g", p.StepsPerMinute)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "mix: %s, %g steps a minute\n", p.Mix, p.StepsPerMinute)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "type\tcalls/step\tmax_tokens\tprompt\tcharged/call\tat %d\t\n", p.FlatMaxTokens)
	for _, c := range p.PerType {
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", c.Type, c.CallsPerStep, c.MaxTokens*c.N, c.PromptTokens, c.Charged, c.FlatCharged)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)

	t, f := p.Sizing, p.FlatCap
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tcaps\tflat %d\n", p.FlatMaxTokens)
	if r := p.Runs; r != nil {
		fmt.Fprintf(tw, "tokens per agent-minute, p99 (planned on)\t%.0f\t%.0f\n", r.TokensPerMinute.P99, r.FlatTokensPerMinute.P99)
		fmt.Fprintf(tw, "tokens per agent-minute, mean\t%.0f\t%.0f\n", r.TokensPerMinute.Mean, r.FlatTokensPerMinute.Mean)
		fmt.Fprintf(tw, "calls per agent-minute, p99\t%.1f\t%.1f\n", t.CallsPerAgentMinute, f.CallsPerAgentMinute)
	} else {
		fmt.Fprintf(tw, "tokens per agent-minute\t%.0f\t%.0f\n", t.TokensPerAgentMinute, f.TokensPerAgentMinute)
		fmt.Fprintf(tw, "calls per agent-minute\t%.1f\t%.1f\n", t.CallsPerAgentMinute, f.CallsPerAgentMinute)
	}
	fmt.Fprintf(tw, "agents by tokens\t%d\t%d\n", t.AgentsByTokens, f.AgentsByTokens)
	fmt.Fprintf(tw, "agents by requests\t%d\t%d\n", t.AgentsByRequests, f.AgentsByRequests)
	fmt.Fprintf(tw, "agents\t%d (%s)\t%d (%s)\n", t.Agents, binds(t.Binding), f.Agents, binds(f.Binding))
	fmt.Fprintf(tw, "first call's charge\t%.0f\t%.0f\n", t.FirstCallTokens, f.FirstCallTokens)
	fmt.Fprintf(tw, "starts a second\t%.1f (%s)\t%.1f (%s)\n", t.StaggerPerS, binds(t.StaggerBinding), f.StaggerPerS, binds(f.StaggerBinding))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nthe flat cap costs %.2f× the tokens an agent-minute the types' caps do", p.Factor)
	if p.Runs != nil {
		fmt.Fprintf(w, " (at the p99)")
	}
	fmt.Fprintln(w)
	if p.Runs != nil {
		fmt.Fprintln(w, "planned at the p99 of the runs' tokens a minute, not the mean: a fleet's worst minutes are its long runs overlapping")
	}
	if r, s := p.Runs, p.AtHitRate; r != nil && s != nil {
		fmt.Fprintf(w, "learned runs: %d of %d runs replayed (a hit rate of %.0f%%), planned above from the other %d\n", r.Replayed, r.Runs+r.Replayed, 100*r.HitRate, r.Runs)
		fmt.Fprintf(w, "at that hit rate the budget feeds %d agents at once (%s, %.0f tokens an agent-minute: a replay is short, so its agent asks sooner) and completes %.0f tasks an hour, against %.0f with the model on every run\n",
			s.Agents, binds(s.Binding), s.TokensPerAgentMinute, r.TasksPerHourLearned, r.TasksPerHour)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// binds says what binds a figure, in words.
func binds(what string) string {
	switch what {
	case Tokens, Requests:
		return what + " bind"
	}
	return "the " + what + " binds"
}
