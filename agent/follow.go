package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// follow takes the learned steps of the task step i with no model call:
// each element found again in the page as it is now, acted on, and its
// outcome checked to be of the learned kind. It reports whether the goal
// is reached: on the task's last step, only when the success check
// holds. At the first step it cannot take as learned it stops, the miss
// counted, and the model takes over from the page as it is, with what
// was replayed in its history.
func (r *runner) follow(ctx context.Context, i int, last bool) (bool, error) {
	l := r.learn
	if l == nil || l.entry == nil || !l.replayOK {
		return false, nil
	}
	g := l.entry.Goal(i)
	if g == nil {
		l.miss(learned.MissUnusable, fmt.Sprintf("nothing learned for step %d of the task", i+1))
		return false, nil
	}
	snap, err := r.page.Observe(ctx)
	if err != nil {
		return false, err
	}
	for k, s := range g.Steps {
		if r.modelSteps() >= r.maxSteps() {
			// A learned run longer than the task allows is not followed
			// past its bound, wherever it came from.
			l.miss(learned.MissUnusable, fmt.Sprintf("more learned steps than max_steps (%d)", r.maxSteps()))
			return false, nil
		}
		if last {
			if met, err := r.successHolds(ctx); err != nil || met {
				return l.reached(g, met), err
			}
		}
		next, why, err := r.replay(ctx, snap, s, k, len(g.Steps))
		if err != nil {
			return false, err
		}
		if why != "" {
			r.progress("learned: step %d of %d not replayed: %s; the model takes over", k+1, len(g.Steps), why)
			return false, nil
		}
		snap = next
	}
	if !last {
		return l.reached(g, true), nil
	}
	met, err := r.successHolds(ctx)
	if err == nil && !met {
		l.miss(learned.MissUnchecked, "the learned steps ran out before the success check held")
	}
	return l.reached(g, met), err
}

// reached settles a goal the learned steps reached: its plan, never
// made, is saved too, and kept for the next entry.
func (l *learning) reached(g *learned.Goal, met bool) bool {
	if met {
		l.goal().PlanReserved = g.PlanReserved
		l.res.TokensSaved += g.PlanReserved
	}
	return met
}

// replay takes one learned step on snap and returns the page it left;
// why is set when the step could not be taken as learned (the miss is
// noted), and the step is recorded whenever it was taken.
func (r *runner) replay(ctx context.Context, snap *browser.Snapshot, s learned.Step, k, of int) (*browser.Snapshot, string, error) {
	l := r.learn
	a, why := r.learnedAction(snap, s)
	if why != "" {
		l.miss(learned.MissElement, why)
		return snap, why, nil
	}
	step, began := Step{Replayed: true, TokensSaved: s.Reserved, Why: fmt.Sprintf("learned step %d of %d", k+1, of)}, time.Now()
	step.Action = a.String()
	p := &pursuit{snap: snap}
	out, err := r.act(ctx, p, a, &step)
	if err != nil {
		r.record(ctx, &step, began)
		return snap, "", err
	}
	if failed := strings.HasPrefix(step.Outcome, "failed"); failed {
		r.record(ctx, &step, began)
		l.miss(learned.MissAction, step.Outcome)
		return snap, step.Outcome, nil
	}
	if err := r.look(ctx, p, a, &step); err != nil {
		r.record(ctx, &step, began)
		return snap, "", err
	}
	l.capture(snap, p.snap, a, out, s.Reserved)
	r.record(ctx, &step, began)
	l.res.Replayed++
	l.res.TokensSaved += s.Reserved
	if why := l.unlike(s.Outcome, snap, p.snap, a, out); why != "" {
		l.miss(learned.MissOutcome, why)
		return p.snap, why, nil
	}
	return p.snap, "", nil
}

// learnedAction is the learned step as an action on snap: its element
// found again, its parameters bound. why says what is missing.
func (r *runner) learnedAction(snap *browser.Snapshot, s learned.Step) (calltypes.Action, string) {
	a, err := calltypes.ParseAction(s.Action)
	if err != nil {
		return a, err.Error()
	}
	text, ok := r.learn.ps.bind(a.Text)
	if !ok {
		return a, "the step names a parameter the run has no value for"
	}
	a.Text = text
	if s.Target != nil {
		if a.Index = find(snap, s.Target, r.learn.ps); a.Index < 0 {
			return a, "no one clear match for " + s.Target.String()
		}
	}
	return a, ""
}

// unlike says how the outcome differs in kind from the learned one, ""
// when it does not: a navigation to a path of the learned shape, a change
// (the element reading what it read when learned, if it still stands),
// or anything but a navigation where nothing happened.
func (l *learning) unlike(want learned.Outcome, before, after *browser.Snapshot, a calltypes.Action, out browser.Outcome) string {
	got := string(out.Effect)
	switch want.Effect {
	case learned.Navigated:
		path, _ := l.ps.bind(want.Path)
		if got != learned.Navigated || !sameShape(pathOf(out.URL), path) {
			return fmt.Sprintf("learned: navigated to %s; now: %s to %s", path, got, pathOf(out.URL))
		}
	case learned.Changed:
		if got != learned.Changed {
			return "learned: the page changed; now: " + got
		}
		if want.Reads == "" {
			return ""
		}
		reads, _ := l.ps.bind(want.Reads)
		if i := sameElement(before, after, a.Index); i >= 0 && after.Elements[i].Name != reads && fold(after.Elements[i].Name) != fold(reads) {
			return fmt.Sprintf("learned: the element read %q; now it reads %q", reads, after.Elements[i].Name)
		}
	case learned.Nothing:
		if got == learned.Navigated {
			return "learned: nothing happened; now it navigated to " + pathOf(out.URL)
		}
	}
	return ""
}

// sameShape reports two paths alike but for the numbers in them: an
// order's page is /orders/8812 one run and /orders/8813 the next.
func sameShape(a, b string) bool {
	return digitless(a) == digitless(b)
}

func digitless(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, strings.TrimSuffix(s, "/"))
}
