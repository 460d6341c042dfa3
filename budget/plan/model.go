package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// Defaults of a plan made without runs: the article's figures, a prompt
// of 1,240 tokens as Azure counts it and four steps a minute.
const (
	DefaultPromptTokens   = 1240
	DefaultStepsPerMinute = 4
)

// Options are a plan's assumptions; zero fields take the defaults.
type Options struct {
	// PromptTokens is the prompt estimate every call is charged, without
	// runs.
	PromptTokens int64
	// StepsPerMinute is an agent's pace. With runs, 0 keeps the runs' own
	// pace; a value retimes them to it.
	StepsPerMinute float64
	// FlatCap is the max_tokens the types' caps are compared with.
	FlatCap int64
}

func (o Options) flat() int64 {
	if o.FlatCap <= 0 {
		return DefaultFlatCap
	}
	return o.FlatCap
}

// Share is one call type's calls in an agent's step.
type Share struct {
	Type    string  `json:"type"`
	PerStep float64 `json:"calls_per_step"`
}

// Mix is the calls an agent makes a step, by type; the first is the call
// an agent makes first.
type Mix struct {
	Name   string
	Shares []Share
}

// ClickPick is the article's model of an agent: one click-pick call a
// step.
func ClickPick() Mix {
	return Mix{Name: calltypes.ClickPick, Shares: []Share{{calltypes.ClickPick, 1}}}
}

// Agent is headroom's own agent, calltypes.AgentMix spread over its
// AgentSteps steps: a plan and a summary a task, a pick and a check a
// step. It starts with the plan.
func Agent() Mix {
	m := Mix{Name: "agent"}
	for _, s := range calltypes.AgentMix() {
		m.Shares = append(m.Shares, Share{s.Type, float64(s.Calls) / calltypes.AgentSteps})
	}
	return m
}

// ParseMix reads a --mix value: click-pick, agent, or a list of types
// with their calls a step, TYPE[:CALLS],... (one call when CALLS is left
// out), the first being the call an agent makes first.
func ParseMix(s string) (Mix, error) {
	switch strings.TrimSpace(s) {
	case "", calltypes.ClickPick:
		return ClickPick(), nil
	case "agent":
		return Agent(), nil
	}
	m := Mix{Name: s}
	for part := range strings.SplitSeq(s, ",") {
		name, calls, hasCalls := strings.Cut(strings.TrimSpace(part), ":")
		per := 1.0
		if hasCalls {
			v, err := strconv.ParseFloat(strings.TrimSpace(calls), 64)
			if err != nil || !(v > 0) || v > 1000 {
				return Mix{}, fmt.Errorf("%q: the calls a step are a number above 0, such as %s:2 or %s:0.1", part, name, name)
			}
			per = v
		}
		if name == "" {
			return Mix{}, fmt.Errorf("%q: name a call type, such as click-pick, or use click-pick or agent", s)
		}
		m.Shares = append(m.Shares, Share{name, per})
	}
	return m, nil
}

// Charge is one call type's cost to the budget: what a call is charged
// at admission with the type's cap and with the flat one, and how many a
// step calls for.
type Charge struct {
	Type         string  `json:"type"`
	CallsPerStep float64 `json:"calls_per_step"`
	// Calls is how many the runs made; 0 for a plan made without runs.
	Calls     int     `json:"calls,omitempty"`
	MaxTokens float64 `json:"max_tokens"`
	N         float64 `json:"n"`
	// PromptTokens is the prompt's part of the charge, as estimated at
	// admission: the charge less max_tokens × n.
	PromptTokens float64 `json:"prompt_tokens"`
	Charged      float64 `json:"charged_per_call"`
	FlatCharged  float64 `json:"flat_charged_per_call"`
}

// Plan is a fleet's size with the types' caps and with a flat cap.
type Plan struct {
	Sizing
	FlatCap Sizing `json:"flat_cap"`
	// FlatMaxTokens is the flat cap FlatCap is planned at.
	FlatMaxTokens int64 `json:"flat_max_tokens"`
	// Factor is the flat cap's tokens an agent-minute over the types'
	// caps': how many times as many agents the caps feed, before rounding.
	Factor         float64  `json:"factor"`
	StepsPerMinute float64  `json:"steps_per_minute"`
	Mix            string   `json:"mix"`
	PerType        []Charge `json:"per_type"`
	Budget         Budget   `json:"budget"`
	Runs           *Runs    `json:"runs,omitempty"`
	// AtHitRate is the sizing at the runs' measured share of replayed
	// runs (Runs.HitRate), when some were: the fleet's learned steps
	// asking the model less.
	AtHitRate *Sizing  `json:"at_hit_rate,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Model plans from the call types' caps alone: every call is charged
// the prompt estimate plus its type's max_tokens × n, as headroom
// reserves it, and an agent makes the mix's calls each step.
func Model(b Budget, types *calltypes.Registry, mix Mix, o Options) (*Plan, error) {
	if len(mix.Shares) == 0 {
		return nil, fmt.Errorf("no call types in the mix")
	}
	prompt := o.PromptTokens
	if prompt == 0 {
		prompt = DefaultPromptTokens
	}
	if prompt < 0 {
		return nil, fmt.Errorf("prompt tokens %d: a prompt is charged at least zero tokens", prompt)
	}
	spm := o.StepsPerMinute
	if spm == 0 {
		spm = DefaultStepsPerMinute
	}
	if !(spm > 0) {
		return nil, fmt.Errorf("steps per minute %v: an agent's pace is above zero", spm)
	}
	flat := o.flat()
	p := &Plan{FlatMaxTokens: flat, StepsPerMinute: spm, Mix: mix.Name, Budget: b}
	var tuned, flatD Demand
	for i, s := range mix.Shares {
		t, ok := types.Lookup(s.Type)
		if !ok {
			return nil, fmt.Errorf("%q is not a call type (have: %s)", s.Type, names(types))
		}
		n := max(1, t.N)
		c := Charge{
			Type: t.Name, CallsPerStep: s.PerStep, MaxTokens: float64(t.MaxTokens), N: float64(n),
			PromptTokens: float64(prompt),
			Charged:      float64(prompt + t.MaxTokens*n),
			FlatCharged:  float64(prompt + flat*n),
		}
		p.PerType = append(p.PerType, c)
		tuned.TokensPerMinute += spm * s.PerStep * c.Charged
		flatD.TokensPerMinute += spm * s.PerStep * c.FlatCharged
		tuned.CallsPerMinute += spm * s.PerStep
		if i == 0 {
			tuned.FirstCall, flatD.FirstCall = c.Charged, c.FlatCharged
		}
	}
	flatD.CallsPerMinute = tuned.CallsPerMinute
	if b.ReasoningModels {
		p.Notes = append(p.Notes, "the deployments include reasoning models, whose calls are also charged a reasoning allowance on top of each cap, which these charges leave out: plan from --runs of such a fleet")
	}
	return p, p.size(tuned, flatD)
}

// size fills both sizings and the factor between them.
func (p *Plan) size(tuned, flat Demand) error {
	var err error
	if p.Sizing, err = Size(p.Budget, tuned); err != nil {
		return err
	}
	if p.FlatCap, err = Size(p.Budget, flat); err != nil {
		return err
	}
	p.Factor = flat.TokensPerMinute / tuned.TokensPerMinute
	if p.Agents == 0 {
		p.Notes = append(p.Notes, "the budget feeds no agent at once: one agent asks more of it in a minute than it holds")
	}
	return nil
}

func names(types *calltypes.Registry) string {
	var ns []string
	for _, t := range types.Types() {
		ns = append(ns, t.Name)
	}
	return strings.Join(ns, ", ")
}
