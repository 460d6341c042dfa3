package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// pursuit is one sub-goal under way: the plan, where in it the agent is,
// and the page as last seen.
type pursuit struct {
	goal string
	plan []string
	pos  int // the plan step the next pick is for
	idle int // steps in a row that changed nothing
	// replanned is the repeat that made the last plan, if one did: the
	// same pick again right after it is stuck.
	replanned string
	snap      *browser.Snapshot
	// last is set on the task's last step: where its success check, when
	// it has one, says whether the goal is met.
	last bool
}

// pursue works toward one sub-goal with the model, a step at a time, and
// reports whether it was met: look at the page and plan; then, until the
// goal is met or a bound stops it, pick an action and take it, or judge
// the goal when the model says it is done.
func (r *runner) pursue(ctx context.Context, goal string, last bool) (bool, error) {
	p, err := r.begin(ctx, goal)
	if err != nil {
		return false, err
	}
	p.last = last
	for {
		if r.modelSteps() >= r.maxSteps() {
			return false, &stop{Failed, fmt.Sprintf("max_steps (%d) reached before the goal was met", r.maxSteps()), nil}
		}
		if met, err := r.successHolds(ctx); err != nil || met {
			return met, err
		}
		step, began := Step{}, time.Now()
		pick, err := r.pick(ctx, p, &step)
		if err != nil {
			r.record(ctx, &step, began)
			return false, err
		}
		var met bool
		switch {
		case pick.Kind == calltypes.ActDone:
			return r.judgeDone(ctx, p, pick, &step, began)
		case r.repeats(p, pick):
			err = r.replanAfterRepeat(ctx, p, pick, &step, began)
		default:
			met, err = r.take(ctx, p, pick, &step, began)
		}
		if err != nil || met {
			return met, err
		}
	}
}

// begin looks at the page and makes the first plan.
func (r *runner) begin(ctx context.Context, goal string) (*pursuit, error) {
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return nil, err
	}
	plan, err := r.plan(ctx, goal, snap, r.handedOver())
	if err != nil {
		return nil, err
	}
	return &pursuit{goal: goal, plan: plan, snap: snap}, nil
}

// handedOver is what the model plans with when it takes over from a
// learned run: the steps replayed so far; nil when none were.
func (r *runner) handedOver() []calltypes.Taken {
	if r.learn == nil || r.learn.res.Replayed == 0 {
		return nil
	}
	return r.recent()
}

// pick asks the model for the next action on the page as it is.
func (r *runner) pick(ctx context.Context, p *pursuit, step *Step) (calltypes.Action, error) {
	in := calltypes.PickInput{Goal: p.goal, Plan: p.plan, Step: p.pos, Page: r.view(calltypes.ClickPick, p.snap, nil, -1), Notes: r.notes(), History: r.recent(), Files: r.t.filesNote()}
	pick, rep, err := call(ctx, r, calltypes.PickCall, in, r.sight(ctx, calltypes.ClickPick, p.snap, p.idle > 0))
	step.Calls = append(step.Calls, rep)
	if err != nil {
		step.Action, step.Outcome = "(no pick)", "failed: "+err.Error()
		return pick, err
	}
	step.Action, step.Why = pick.String(), pick.Reason
	return pick, nil
}

// judgeDone settles a pick of done: it means met or hopeless, and the
// page says which.
func (r *runner) judgeDone(ctx context.Context, p *pursuit, pick calltypes.Action, step *Step, began time.Time) (bool, error) {
	v, rep, err := r.check(ctx, p.goal, nil, p.snap, nil)
	step.Calls = append(step.Calls, rep)
	if err == nil {
		step.Verdict = verdict(v)
	}
	step.Outcome = "done"
	r.record(ctx, step, began)
	switch {
	case err != nil:
		return false, err
	case !v.Answer:
		return false, &stop{Failed, "the model gave up: " + pick.Reason, nil}
	}
	return true, nil
}

// repeats reports whether the pick was taken on this very page before: a
// loop.
func (r *runner) repeats(p *pursuit, pick calltypes.Action) bool {
	key := p.snap.Fingerprint + "|" + pick.String()
	r.seen[key]++
	return r.seen[key] > 1
}

// replanAfterRepeat answers a loop: the action is not taken, the history
// says so, and the model plans again from here; the same repeat right
// after that plan is stuck.
func (r *runner) replanAfterRepeat(ctx context.Context, p *pursuit, pick calltypes.Action, step *Step, began time.Time) error {
	key := p.snap.Fingerprint + "|" + pick.String()
	elem := describe(p.snap, pick)
	if p.replanned == key {
		step.Target, step.Outcome = elem, "not taken: the same action on the same page again, after planning again"
		r.record(ctx, step, began)
		return &stop{Stuck, fmt.Sprintf("%s on %s again after planning again: it was taken there before", pick, p.snap.URL), nil}
	}
	step.Target, step.Outcome = elem, "not taken: it was taken on this very page before; planning again"
	r.taken = append(r.taken, calltypes.Taken{Action: pick, Element: elem, Outcome: "not taken: already taken on this very page"})
	r.record(ctx, step, began)
	return r.replan(ctx, p, key)
}

// replan makes a new plan with what was tried, and starts it from the top.
func (r *runner) replan(ctx context.Context, p *pursuit, because string) error {
	plan, err := r.plan(ctx, p.goal, p.snap, r.recent())
	if err != nil {
		return err
	}
	p.plan, p.pos, p.idle, p.replanned = plan, 0, 0, because
	return nil
}

// take acts on the pick, looks at the page it left, and, when the page
// changed, asks whether that met the goal; a run of steps that change
// nothing makes the model plan again.
func (r *runner) take(ctx context.Context, p *pursuit, pick calltypes.Action, step *Step, began time.Time) (bool, error) {
	p.replanned = ""
	out, err := r.act(ctx, p, pick, step)
	if err != nil {
		r.record(ctx, step, began)
		return false, err
	}
	before := p.snap
	if err := r.look(ctx, p, pick, step); err != nil {
		r.record(ctx, step, began)
		return false, err
	}
	if out.Effect == browser.Navigated || out.Effect == browser.Changed {
		p.idle = 0
		p.pos = min(p.pos+1, max(0, len(p.plan)-1))
		met, err := r.verify(ctx, p, before, step)
		r.learnStep(before, p.snap, pick, out, step)
		r.record(ctx, step, began)
		return met, err
	}
	r.learnStep(before, p.snap, pick, out, step)
	r.record(ctx, step, began)
	if p.idle++; p.idle >= stallSteps {
		return false, r.replan(ctx, p, "")
	}
	return false, nil
}

// learnStep keeps a step the model chose and the page took, for a
// learned run: what its calls reserved is what a replay of it saves.
func (r *runner) learnStep(before, after *browser.Snapshot, pick calltypes.Action, out browser.Outcome, step *Step) {
	if r.learn == nil || strings.HasPrefix(step.Outcome, "failed") {
		return
	}
	var reserved int64
	for _, c := range step.Calls {
		reserved += c.TokensReserved
	}
	r.learn.capture(before, after, pick, out, reserved)
}

// act takes the picked action on the page and notes what it did. An
// action that failed is an outcome the next pick reads, unless the
// browser itself is gone or the run is over: that is the error.
func (r *runner) act(ctx context.Context, p *pursuit, pick calltypes.Action, step *Step) (browser.Outcome, error) {
	act, err := BrowserAction(p.snap, pick)
	var out browser.Outcome
	if err == nil {
		out, err = r.page.Do(ctx, act)
	}
	if out.Secret {
		// Typed into a password field, or a secret by name: the value is
		// no step's to show.
		pick.Text = shown(pick.Text, true)
		step.Action = pick.String()
	}
	step.Target, step.Outcome, step.URL = describe(p.snap, pick), r.outcome(out, err), out.URL
	r.taken = append(r.taken, calltypes.Taken{Action: pick, Element: step.Target, Outcome: clip(step.Outcome, noteRunes)})
	if err != nil && (fatal(err) || ctx.Err() != nil) {
		return out, err
	}
	return out, nil
}

// look observes the page the action left, for the next pick; what the
// acted-on element now says is the action's effect ("Add to cart" now
// reads "Added"), added to the step's outcome.
func (r *runner) look(ctx context.Context, p *pursuit, pick calltypes.Action, step *Step) error {
	before := p.snap
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return err
	}
	p.snap = snap
	if now := changeOf(before, snap, pick.Index); now != "" && !strings.HasPrefix(step.Outcome, "failed") {
		step.Outcome += "; " + now
		r.taken[len(r.taken)-1].Outcome = clip(step.Outcome, noteRunes)
	}
	return nil
}

// verify asks whether the changed page meets the goal: only the page can
// say.
func (r *runner) verify(ctx context.Context, p *pursuit, before *browser.Snapshot, step *Step) (bool, error) {
	last := r.taken[len(r.taken)-1]
	v, rep, err := r.check(ctx, p.goal, &last, p.snap, before)
	step.Calls = append(step.Calls, rep)
	if err != nil {
		return false, err
	}
	step.Verdict = verdict(v)
	if v.Answer && p.last && r.t.Success != nil {
		// The task's own check has the last word on its last goal: a yes
		// the page does not bear out goes on to the next step.
		held, err := r.successHolds(ctx)
		if err != nil || !held {
			step.Verdict += "; the success check does not hold yet"
			return false, err
		}
	}
	return v.Answer, nil
}
