package pageview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// The inputs of the time, their JSON as the user message.
type (
	legacyPick struct {
		Goal    string            `json:"goal"`
		Plan    []string          `json:"plan,omitempty"`
		Step    int               `json:"step"`
		Page    legacyPage        `json:"page"`
		History []calltypes.Taken `json:"history,omitempty"`
	}
	legacyCheck struct {
		Question   string           `json:"question"`
		Goal       string           `json:"goal"`
		LastAction *calltypes.Taken `json:"last_action,omitempty"`
		Page       legacyPage       `json:"page"`
	}
	legacyPlan struct {
		Goal string     `json:"goal"`
		Page legacyPage `json:"page"`
	}
	legacySummary struct {
		Goal string     `json:"goal"`
		Page legacyPage `json:"page"`
	}
)

// The history the agent keeps, and the check's question of the time.
const (
	recentSteps       = 3
	legacyGoalMetText = "Does the page now show that the goal is met?"
)

// pricer prices one call both ways: today's system prompt and JSON
// message, and the type's prompt and sections.
type pricer struct{ types *calltypes.Registry }

func (p pricer) today(typ string, in any) int64 {
	t, _ := p.types.Lookup(typ)
	return llm.Estimate([]tokens.Message{{Role: "system", Content: legacySystem[typ]}, {Role: "user", Content: mustJSON(in)}}, t.MaxTokens, 1)
}

func (p pricer) view(typ string, in any) int64 {
	t, _ := p.types.Lookup(typ)
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err) // the built-ins' inputs always marshal
	}
	return llm.Estimate([]tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: t.Message(raw)}}, t.MaxTokens, 1)
}

func (p pricer) lookup(typ string) calltypes.Type {
	t, _ := p.types.Lookup(typ)
	return t
}

// priceTask walks the task's steps again on its recording, as the run
// took them, and prices each model step's pick and check on the pages
// they saw: the same goal, plan and history both ways, only the page and
// the message's form differ.
func priceTask(ctx context.Context, bo browser.Options, types *calltypes.Registry, t *agent.Task, res agent.Result) (_ TaskRow, _ []StepRow, err error) {
	row := TaskRow{Task: t.Name, Status: res.Status}
	pr := pricer{types}
	p, _, err := replayed(ctx, bo, t.Replay, t.StartURL, t.AllowedDomains...)
	if err != nil {
		return row, nil, err
	}
	defer func() { err = errors.Join(err, p.Close()) }()
	if _, err := p.Navigate(ctx, t.StartURL); err != nil {
		return row, nil, err
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		return row, nil, err
	}
	var scripted []browser.Step
	goal := t.Goal
	for _, s := range t.Steps {
		if s.Agent == "" {
			scripted = append(scripted, s.Step)
		} else {
			goal = s.Agent
		}
	}
	var steps []StepRow
	var history []calltypes.Taken
	planned, model := false, 0
	for _, s := range res.Steps {
		if s.Scripted {
			if len(scripted) == 0 {
				return row, nil, fmt.Errorf("step %d: more scripted steps than the task has", s.N)
			}
			if _, err := p.Do(ctx, scripted[0].Action(os.TempDir())); err != nil {
				return row, nil, fmt.Errorf("step %d: %w", s.N, err)
			}
			scripted = scripted[1:]
			if snap, err = p.Observe(ctx); err != nil {
				return row, nil, err
			}
			continue
		}
		act, err := calltypes.ParseAction(s.Action)
		if err != nil {
			continue // no pick was made
		}
		if !planned {
			planned = true
			row.Plan = [2]int64{
				pr.today(calltypes.Planning, legacyPlan{Goal: goal, Page: legacyOf(snap, true)}),
				pr.view(calltypes.Planning, calltypes.PlanInput{Goal: goal, Page: agent.ViewOf(pr.lookup(calltypes.Planning), snap, nil, -1)}),
			}
		}
		recent := history[max(0, len(history)-recentSteps):]
		pos := min(model, max(0, len(res.Plan)-1))
		model++
		step := StepRow{Task: t.Name, Step: s.N, Action: s.Action,
			Today: pr.today(calltypes.ClickPick, legacyPick{Goal: goal, Plan: res.Plan, Step: pos, Page: legacyOf(snap, true), History: recent}),
			View:  pr.view(calltypes.ClickPick, calltypes.PickInput{Goal: goal, Plan: res.Plan, Step: pos, History: recent, Page: agent.ViewOf(pr.lookup(calltypes.ClickPick), snap, nil, -1)}),
		}
		taken := calltypes.Taken{Action: act, Element: s.Target, Outcome: clip(s.Outcome, 80)}
		before, last := snap, &taken
		acted := act.Kind != calltypes.ActDone && !strings.HasPrefix(s.Outcome, "not taken")
		if acted {
			a, err := agent.BrowserAction(snap, act)
			if err == nil {
				_, err = p.Do(ctx, a)
			}
			if err != nil && !strings.HasPrefix(s.Outcome, "failed") {
				return row, nil, fmt.Errorf("step %d, %s: %w", s.N, s.Action, err)
			}
			if snap, err = p.Observe(ctx); err != nil {
				return row, nil, err
			}
		} else {
			before, last = nil, nil
		}
		if s.Verdict != "" {
			acted := -1
			if last != nil {
				acted = act.Index
			}
			step.Today += pr.today(calltypes.YesNo, legacyCheck{Question: legacyGoalMetText, Goal: goal, LastAction: last, Page: legacyOf(snap, true)})
			step.View += pr.view(calltypes.YesNo, calltypes.CheckInput{Question: agent.GoalQuestion, Goal: goal, LastAction: last, Page: agent.ViewOf(pr.lookup(calltypes.YesNo), snap, before, acted)})
		}
		history = append(history, taken)
		steps = append(steps, step)
		row.Steps++
		row.Today += step.Today
		row.View += step.View
	}
	row.Answer = [2]int64{
		pr.today(calltypes.Summarize, legacySummary{Goal: t.Goal, Page: legacyOf(snap, false)}),
		pr.view(calltypes.Summarize, calltypes.SummaryInput{Goal: t.Goal, History: history[max(0, len(history)-recentSteps):], Page: agent.ViewOf(pr.lookup(calltypes.Summarize), snap, nil, -1)}),
	}
	return row, steps, nil
}
