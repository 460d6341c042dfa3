package budget

import (
	"context"
	"maps"
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

// Dashboard is the budget as a fleet's dashboard shows it: per deployment,
// never only summed, from the shared store (so any one process shows the
// whole fleet's reservations) and from this process's own counters.
type Dashboard struct {
	At          time.Time
	Deployments []DeploymentView
	// Spread is the headroom spread: the fullest deployment's reserved
	// fraction less the emptiest's. Wide while the total stays flat means
	// the routing is not doing its job.
	Spread float64
	// ReservedTokens is the fleet's, over every deployment, this window;
	// Agents the fleet's agents alive by the store's census, -1 when the
	// store keeps none.
	ReservedTokens int64
	Agents         int
	// Shed is this process's shed calls, by priority class.
	Shed map[Class]int64
	// Store counts this process's store round trips, by operation (see
	// Store.Stats): a store that stalls shows as asks again before it
	// shows as calls that failed.
	Store map[string]StoreOpStats
}

// DeploymentView is one deployment on the dashboard.
type DeploymentView struct {
	Name  string
	Quota string // the quota it draws on (shared by deployments of one pool of quota)
	// ConfiguredTPM is the config's; EffectiveTPM the lower of that and the
	// limit Azure's headers last reported (a temporary adjustment shows
	// here first). RPM is the configured request limit.
	ConfiguredTPM, EffectiveTPM, RPM int64
	// Reserved is the tokens the fleet holds in the current window;
	// ReservedFraction that over the effective limit.
	Reserved         int64
	ReservedFraction float64
	// TokenUtilisation and RequestUtilisation are the share of the quota
	// in use, tokens this window over the configured limit, requests in
	// the 10 s window over its allowance: one gauge per dimension, so
	// "alert at 70% sustained" is one rule.
	TokenUtilisation, RequestUtilisation float64
	Requests1s, Requests10s              int64
	BreakerOpen                          bool
	// RateLimited is the 429s this process met, by cause, since it
	// started; FleetRateLimited the fleet's in this window and the last,
	// from the census (nil without one).
	RateLimited      map[Cause]int64
	FleetRateLimited map[Cause]int64
	// WritesFailed is the writes after a call this process's store did
	// not take, by write (MetricsSnapshot.StoreWritesFailed);
	// FleetWritesLost the fleet's, as its processes told the census once
	// the store answered again (over budget.LostWritesKept; 0 without a
	// census).
	WritesFailed    map[string]int64
	FleetWritesLost int64
	// FleetPrompt is the prompt tokens the fleet's calls were counted on
	// the deployment, and the part read from its prompt cache, as its
	// processes told the census (over budget.PromptKept).
	FleetPrompt PromptTokens
	// Answered is the calls this process had answered by it.
	Answered int64
	// Model is what the fleet has learned of the deployment's counter, as
	// the store holds it; nil when the router keeps its model fixed or the
	// store keeps no calibration.
	Model *ModelView
}

// ModelView is the model a deployment's calls are admitted under.
type ModelView struct {
	// Ratio is what Azure is seen to charge ÷ what we reserve (1 until
	// learned; Learned says whether it was).
	Ratio   float64
	Learned bool
	// Safety is the share of the limit kept back, and Margin the share of
	// the limit, as we count it, reservations may use.
	Safety, Margin float64
	// Pacing is the allowance for admission-to-arrival lag request pacing
	// adds to each window: Lag measured, Extra taught by 429s.
	Pacing, Lag, Extra time.Duration
}

// Dashboard reads the store for every deployment the router routes over.
func (r *Router) Dashboard(ctx context.Context) (Dashboard, error) {
	if err := r.made(); err != nil {
		return Dashboard{}, err
	}
	var ds []*Deployment
	seen := map[string]bool{}
	for _, d := range r.cfg.Deployments {
		if !seen[d.Name] {
			seen[d.Name] = true
			ds = append(ds, &d)
		}
	}
	quotas := make([]string, len(ds))
	for i, d := range ds {
		quotas[i] = d.QuotaKey
	}
	us, err := r.store.Usage(ctx, quotas...)
	if err != nil {
		return Dashboard{}, err
	}
	m := r.metrics.snapshot()
	out := Dashboard{At: time.Now(), Agents: -1, Shed: m.ShedBy, Store: r.store.Stats()}
	var count *Count
	if c, ok := r.store.Census(); ok {
		if n, err := c.Count(ctx, quotas...); err == nil {
			count = &n
			out.Agents = n.Agents
		}
	}
	var cals []learning.Calibration
	if c, ok := r.calibrator(); ok {
		if got, err := c.Calibrations(ctx, quotas...); err == nil {
			cals = got
		}
	}
	lo, hi := 1.0, 0.0
	for i, d := range ds {
		u := us[i]
		eff := d.QuotaTPM
		if u.EffectiveLimit > 0 && u.EffectiveLimit < eff {
			eff = u.EffectiveLimit
		}
		v := DeploymentView{
			Name: d.Name, Quota: d.QuotaKey, ConfiguredTPM: d.QuotaTPM, EffectiveTPM: eff, RPM: d.QuotaRPM,
			Reserved: u.Reserved, Requests1s: u.Requests1s, Requests10s: u.Requests10s,
			BreakerOpen: u.OpenUntil.After(u.Now),
			RateLimited: maps.Clone(m.RateLimitedBy[d.Name]), Answered: m.ByDeployment[d.Name],
			WritesFailed: maps.Clone(m.StoreWritesFailed[d.Name]),
		}
		if v.RateLimited == nil {
			v.RateLimited = map[Cause]int64{}
		}
		if eff > 0 {
			v.ReservedFraction = float64(u.Reserved) / float64(eff)
		}
		if d.QuotaTPM > 0 {
			v.TokenUtilisation = float64(u.Reserved) / float64(d.QuotaTPM)
		}
		if per10 := (Limits{Requests: d.QuotaRPM}).PerTenSeconds(); per10 > 0 {
			v.RequestUtilisation = float64(u.Requests10s) / float64(per10)
		}
		if count != nil {
			v.FleetRateLimited = count.RateLimited[d.QuotaKey]
			v.FleetWritesLost = count.LostWrites[d.QuotaKey]
			v.FleetPrompt = count.Prompt[d.QuotaKey]
		}
		if cals != nil {
			p := r.policy()
			c := cals[i]
			v.Model = &ModelView{Ratio: c.RatioInForce(), Learned: c.Ratio > 0, Safety: c.SafetyInForce(p), Margin: min(MaxMargin, c.Margin(p)),
				Pacing: c.Allowance(p), Lag: c.LagInForce(p), Extra: c.Extra}
		}
		if !seenQuota(out.Deployments, d.QuotaKey) {
			out.ReservedTokens += u.Reserved
		}
		lo, hi = min(lo, v.ReservedFraction), max(hi, v.ReservedFraction)
		out.Deployments = append(out.Deployments, v)
	}
	if len(out.Deployments) > 0 {
		out.Spread = hi - lo
	}
	return out, nil
}

func seenQuota(vs []DeploymentView, quota string) bool {
	for _, v := range vs {
		if v.Quota == quota {
			return true
		}
	}
	return false
}

// census429 counts a 429 in the store's census, behind the call's back:
// the call waits for nothing, and a census that cannot be reached loses a
// count, not a call; the loss is counted as a failed write of d's.
func (r *Router) census429(d *Deployment, cause Cause) {
	c, ok := r.store.Census()
	if !ok {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Count429(ctx, d.QuotaKey, cause); err != nil {
			r.metrics.writeFailed(d.Name, WriteCensus)
		}
	}()
}
