package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// Fleet reads the whole fleet from the shared store, for one long-lived
// scrape target (headroom budget exporter): r's dashboard (every
// deployment's window, limits, breaker, census and learned model), with
// the fleet's totals from the census in place of r's own counters. Every
// agent adds its totals at each check-in (llm.Caller.Tally), so the
// calls of containers long gone still count. r makes no calls: its own
// counters would be zeros.
func Fleet(r *budget.Router) Source {
	return func(ctx context.Context) (View, error) {
		d, err := r.Dashboard(ctx)
		if err != nil {
			return View{Dashboard: budget.Dashboard{At: time.Now(), Agents: -1}}, err
		}
		t, err := r.FleetTally(ctx)
		if err != nil && !errors.Is(err, budget.ErrNoCensus) {
			return View{Dashboard: budget.Dashboard{At: d.At, Agents: -1}}, err
		}
		return FromTally(d, t), nil
	}
}

// FromTally is the view of a dashboard whose counters are the tally's:
// per deployment the calls answered, the 429s by cause and the writes
// lost; the sheds by class and the store's round trips; the call types'
// counters; the runs by status.
func FromTally(d budget.Dashboard, t budget.Tally) View {
	v := View{Dashboard: d, Runs: map[string]int64{}}
	v.Shed = map[budget.Class]int64{}
	v.Store = map[string]budget.StoreOpStats{}
	byName := map[string]*budget.DeploymentView{}
	for i := range v.Deployments {
		dv := &v.Deployments[i]
		dv.Answered, dv.RateLimited, dv.WritesFailed = 0, map[budget.Cause]int64{}, map[string]int64{}
		byName[dv.Name] = dv
	}
	types := map[string]*Type{}
	typ := func(name string) *Type {
		if types[name] == nil {
			types[name] = &Type{Name: name, PromptTokens: map[string]int64{}, CachedTokens: map[string]int64{}}
		}
		return types[name]
	}
	for k, n := range t {
		switch k.Counter {
		case budget.TallyAnswered, budget.TallyRateLimited, budget.TallyWritesFailed:
			dv := byName[k.Deployment]
			if dv == nil {
				continue // a deployment this config no longer names
			}
			switch k.Counter {
			case budget.TallyAnswered:
				dv.Answered += n
			case budget.TallyRateLimited:
				dv.RateLimited[budget.Cause(k.Label)] += n
			default:
				dv.WritesFailed[k.Label] += n
			}
		case budget.TallyShed:
			for _, c := range classes {
				if c.name == k.Label {
					v.Shed[c.c] += n
				}
			}
		case budget.TallyStoreCalls, budget.TallyStoreAgain, budget.TallyStoreDown:
			st := v.Store[k.Label]
			switch k.Counter {
			case budget.TallyStoreCalls:
				st.Calls += n
			case budget.TallyStoreAgain:
				st.AskedAgain += n
			default:
				st.Unavailable += n
			}
			v.Store[k.Label] = st
		case budget.TallyRuns:
			v.Runs[k.Label] += n
		default:
			if k.Type != "" { // a counter a newer agent tells is left out
				addType(typ(k.Type), k, n)
			}
		}
	}
	for _, ty := range types {
		v.Types = append(v.Types, *ty)
	}
	sortTypes(v.Types)
	return v
}

// addType adds one of a call type's totals to it.
func addType(ty *Type, k budget.TallyKey, n int64) {
	switch k.Counter {
	case budget.TallyCalls:
		ty.Calls += n
	case budget.TallyReserved:
		ty.TokensReserved += n
	case budget.TallyUsed:
		ty.TokensUsed += n
	case budget.TallyRefused:
		switch k.Label {
		case "mended":
			ty.Mended += n
		case "repaired":
			ty.Repaired += n
		case "invalid":
			ty.Invalid += n
		}
	case budget.TallyPrompt:
		ty.PromptTokens[k.Deployment] += n
	case budget.TallyCached:
		ty.CachedTokens[k.Deployment] += n
	case budget.TallyImages:
		ty.Images += n
	case budget.TallyImageTokens:
		ty.ImageTokens += n
	case budget.TallyTierFallbacks:
		ty.TierFallbacks += n
	}
}
