package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
)

// plan asks for a plan (again, with what was tried, when history is set).
func (r *runner) plan(ctx context.Context, goal string, snap *browser.Snapshot, history []calltypes.Taken) ([]string, error) {
	in := calltypes.PlanInput{Goal: goal, Page: r.view(calltypes.Planning, snap, nil, -1), History: history}
	p, rep, err := call(ctx, r, calltypes.PlanCall, in, r.sight(ctx, calltypes.Planning, snap, false))
	r.res.Calls = append(r.res.Calls, rep)
	if err != nil {
		return nil, err
	}
	r.res.Plan = p.Steps
	if g := r.learn.goal(); g != nil {
		g.PlanReserved += rep.TokensReserved
	}
	r.progress("plan  %s  (%s)", strings.Join(p.Steps, " / "), callLine(rep))
	return p.Steps, nil
}

// check asks whether the page shows the goal met: after the last action,
// which was taken on before; nil for both when there was none.
func (r *runner) check(ctx context.Context, goal string, last *calltypes.Taken, snap, before *browser.Snapshot) (calltypes.Verdict, llm.Report, error) {
	acted := -1
	if last != nil {
		acted = last.Action.Index
	}
	in := calltypes.CheckInput{Question: GoalQuestion, Goal: goal, LastAction: last, Page: r.view(calltypes.YesNo, snap, before, acted)}
	return call(ctx, r, calltypes.CheckCall, in, r.sight(ctx, calltypes.YesNo, snap, false))
}

// call makes one typed model call of the task, through llm.Call: the
// task's class, its session, what is left of its token budget, a bound
// on the wait, and the page's screenshot when the type's vision gives
// one (nil for none).
func call[In, Out any](ctx context.Context, r *runner, t calltypes.Typed[In, Out], in In, img *calltypes.Image) (Out, llm.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	o := r.callOptions()
	o.Image = img
	out, rep, err := llm.Call(ctx, r.o.Caller, t, in, o)
	r.res.Totals.TokensReserved += rep.TokensReserved // the budget's running count, at once
	return out, rep, err
}

// callNamed is call for a type known by name, such as a task's
// answer_type defined in the config: JSON in, the answer's JSON out.
func callNamed(ctx context.Context, r *runner, name string, in any, img *calltypes.Image) (json.RawMessage, llm.Report, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, llm.Report{}, fmt.Errorf("agent: %s input: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	o := r.callOptions()
	o.Image = img
	out, rep, err := r.o.Caller.Call(ctx, name, raw, o)
	r.res.Totals.TokensReserved += rep.TokensReserved
	return out, rep, err
}

// callOptions place the task's calls: one session, the task's class,
// and what is left of its token budget.
func (r *runner) callOptions() llm.CallOptions {
	o := llm.CallOptions{Session: r.o.Session, Priority: r.t.Priority}
	if r.t.TokenBudget > 0 {
		o.Allowance = max(1, r.t.TokenBudget-r.res.Totals.TokensReserved)
	}
	return o
}

// view is the page a call of the named type reads, in the type's view
// and within its cap; see ViewOf.
func (r *runner) view(typeName string, now, before *browser.Snapshot, acted int) calltypes.Page {
	t, ok := r.o.Caller.Types.Lookup(typeName)
	if !ok {
		// The call will fail on the unknown type; its page is the words.
		t = calltypes.Type{View: calltypes.ViewWords, PageTokens: calltypes.DefaultPageTokens}
	}
	return ViewOf(t, now, before, acted)
}
