// Package plan sizes a fleet from its budget: how many agents the
// deployments' tokens and requests a minute feed at once, and how many
// may start a second so that their first calls fit Azure's 1 s and 10 s
// request windows and the token allowance.
//
// A fleet's size is a division: the budget a minute over what one agent
// reserves a minute. The reservation is what Azure charges at admission,
// the prompt estimate plus max_tokens × n, so the same division with a
// flat cap in place of the types' caps shows what the caps buy.
package plan

import (
	"fmt"
	"math"
	"sort"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
)

// DefaultFlatCap is the max_tokens compared with: the one in the sample
// code most fleets start from.
const DefaultFlatCap = 4096

// Budget is what a fleet spends: its quotas, each counted once however
// many deployment names share it, and the share of each token limit the
// router lets reservations use.
type Budget struct {
	Margin float64 `json:"margin"`
	Quotas []Quota `json:"quotas"`
	// ReasoningModels is set when a deployment serves a reasoning model,
	// whose calls are charged a reasoning allowance beside their caps.
	ReasoningModels bool `json:"reasoning_models,omitempty"`
}

// Quota is one allowance: a deployment's own, or one that several
// Standard deployments in a subscription and region share.
type Quota struct {
	Key         string   `json:"key"`
	Deployments []string `json:"deployments"`
	TPM         int64    `json:"tpm"`
	RPM         int64    `json:"rpm"`
}

// BudgetOf reads the quotas of a validated config. Deployments that share
// a quota key are one allowance, so counting them apart would plan on
// quota that does not exist.
func BudgetOf(c *budget.Config) (Budget, error) {
	if len(c.Deployments) == 0 {
		return Budget{}, fmt.Errorf("deployments: no deployments: a plan divides their tokens and requests a minute, so declare at least one")
	}
	b := Budget{Margin: c.Margin}
	if b.Margin == 0 {
		b.Margin = budget.DefaultMargin
	}
	at := map[string]int{}
	for _, d := range c.Deployments {
		key, tpm, rpm := d.QuotaKey, d.QuotaTPM, d.QuotaRPM
		if key == "" { // not validated: the deployment's own limits
			key, tpm, rpm = d.Name, d.TPM, d.RPM
		}
		if rpm == 0 {
			rpm = models.DefaultRPM(d.Model, tpm)
		}
		i, ok := at[key]
		if !ok {
			at[key] = len(b.Quotas)
			b.Quotas = append(b.Quotas, Quota{Key: key, TPM: tpm, RPM: rpm})
			i = len(b.Quotas) - 1
		}
		b.Quotas[i].Deployments = append(b.Quotas[i].Deployments, d.Name)
		if info, _ := models.Resolve(d.Model, d.Family); info.Family == models.Reasoning {
			b.ReasoningModels = true
		}
	}
	return b, nil
}

// TPM is the sum of the quotas' token limits.
func (b Budget) TPM() int64 {
	var n int64
	for _, q := range b.Quotas {
		n += q.TPM
	}
	return n
}

// RPM is the sum of the quotas' request limits.
func (b Budget) RPM() int64 {
	var n int64
	for _, q := range b.Quotas {
		n += q.RPM
	}
	return n
}

// TokensPerMinute is what reservations may spend a minute: Σ TPM × margin.
func (b Budget) TokensPerMinute() float64 { return float64(b.TPM()) * b.Margin }

// RequestsPerSecond is what the request windows admit a second across the
// quotas: each admits max(1, RPM/60) in a second and max(1, RPM/6) in ten,
// and the tighter of the two sums holds for a burst.
func (b Budget) RequestsPerSecond() (perS float64, window string) {
	var one, ten float64
	for _, q := range b.Quotas {
		one += math.Max(1, float64(q.RPM)/60)
		ten += math.Max(1, float64(q.RPM)/6)
	}
	if ten/10 < one {
		return ten / 10, Window10s
	}
	return one, Window1s
}

// What binds a plan or a stagger.
const (
	Tokens    = "tokens"
	Requests  = "requests"
	Window1s  = "1s window"
	Window10s = "10s window"
)

// Demand is what one agent asks of the budget.
type Demand struct {
	// TokensPerMinute is what an agent reserves in a minute.
	TokensPerMinute float64
	// CallsPerMinute is how many requests it sends in a minute.
	CallsPerMinute float64
	// FirstCall is what its first call reserves: the one every agent of
	// a fleet started together sends in the same few seconds.
	FirstCall float64
	// FirstSecondCalls is how many calls an agent sends in its first
	// second; 0 means 1 (its first call).
	FirstSecondCalls float64
}

// Sizing is how many agents a budget feeds and how fast they may start.
type Sizing struct {
	Agents               int     `json:"agents"`
	AgentsByTokens       int     `json:"agents_by_tokens"`
	AgentsByRequests     int     `json:"agents_by_requests"`
	TokensPerAgentMinute float64 `json:"tokens_per_agent_minute"`
	StaggerPerS          float64 `json:"stagger_per_s"`
	// Binding is tokens or requests: whichever gives fewer agents.
	Binding             string  `json:"binding"`
	CallsPerAgentMinute float64 `json:"calls_per_agent_minute"`
	FirstCallTokens     float64 `json:"first_call_tokens"`
	// StaggerBinding is the 1s window, the 10s window or tokens.
	StaggerBinding string `json:"stagger_binding"`
	// StaggerByRequests and StaggerByTokens are the two bounds on the
	// stagger, unrounded.
	StaggerByRequests float64 `json:"stagger_by_requests"`
	StaggerByTokens   float64 `json:"stagger_by_tokens"`
}

// Size divides the budget by one agent's demand. The token bound spends
// the margin; the request bound does not, since requests are counted
// exactly.
func Size(b Budget, d Demand) (Sizing, error) {
	if !(d.TokensPerMinute > 0) || !(d.CallsPerMinute > 0) || !(d.FirstCall > 0) {
		return Sizing{}, fmt.Errorf("plan: an agent's demand must be above zero (tokens a minute %v, calls a minute %v, first call %v)", d.TokensPerMinute, d.CallsPerMinute, d.FirstCall)
	}
	s := Sizing{
		TokensPerAgentMinute: d.TokensPerMinute,
		CallsPerAgentMinute:  d.CallsPerMinute,
		FirstCallTokens:      d.FirstCall,
		AgentsByTokens:       floor(b.TokensPerMinute() / d.TokensPerMinute),
		AgentsByRequests:     floor(float64(b.RPM()) / d.CallsPerMinute),
	}
	s.Agents, s.Binding = s.AgentsByTokens, Tokens
	if s.AgentsByRequests < s.AgentsByTokens {
		s.Agents, s.Binding = s.AgentsByRequests, Requests
	}
	first := d.FirstSecondCalls
	if first <= 0 {
		first = 1
	}
	perS, window := b.RequestsPerSecond()
	s.StaggerByRequests = perS / first
	s.StaggerByTokens = b.TokensPerMinute() / 60 / d.FirstCall
	s.StaggerPerS, s.StaggerBinding = s.StaggerByTokens, Tokens
	if s.StaggerByRequests < s.StaggerByTokens {
		s.StaggerPerS, s.StaggerBinding = s.StaggerByRequests, window
	}
	s.StaggerPerS = math.Floor(s.StaggerPerS*10+1e-9) / 10
	return s, nil
}

// floor rounds down, forgiving the float error of a division that is
// exact on paper (357,000 / 5,250 is 68, not 67.99999).
func floor(x float64) int {
	if math.IsInf(x, 1) || x > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(math.Floor(x + 1e-9))
}

// percentile is the nearest-rank p-th percentile of xs (p in (0, 100]):
// the smallest value at least p% of them are at or below. Of fewer than
// 100 runs, the p99 is the worst.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
