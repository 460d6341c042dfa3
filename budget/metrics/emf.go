package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "headroom"

// An EMF writes the view as CloudWatch Embedded Metric Format lines, one
// JSON object a line: one per deployment (dimension deployment), one per
// call type (dimension call_type), one for the fleet (no dimension).
type EMF struct {
	// Failed, when set, is told of each flush of Run's ticks that fails
	// (the source unreadable, the writer refusing); Run goes on, and
	// counts them in what it returns.
	Failed func(error)

	w   io.Writer
	src Source

	mu sync.Mutex
}

// NewEMF writes src's view to w.
func NewEMF(w io.Writer, src Source) *EMF { return &EMF{w: w, src: src} }

type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// line is one EMF object: the directive under _aws, the values beside it.
func line(at time.Time, dims []string, values map[string]any, units map[string]string) map[string]any {
	d := directive{Namespace: Namespace, Dimensions: [][]string{dims}}
	if dims == nil {
		d.Dimensions = [][]string{{}}
	}
	for _, name := range sortedKeys(units) {
		d.Metrics = append(d.Metrics, metric{Name: name, Unit: units[name]})
	}
	values["_aws"] = map[string]any{"Timestamp": at.UnixMilli(), "CloudWatchMetrics": []directive{d}}
	return values
}

// Flush writes one set of lines now.
func (e *EMF) Flush(ctx context.Context) error {
	v, err := e.src(ctx)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	var lines []map[string]any
	for _, d := range v.Deployments {
		vals := map[string]any{
			"deployment":           d.Name,
			"ReservedTokens":       d.Reserved,
			"ReservedFraction":     d.ReservedFraction,
			"ConfiguredTPM":        d.ConfiguredTPM,
			"EffectiveTPM":         d.EffectiveTPM,
			"TokenUtilisation":     100 * d.TokenUtilisation,
			"RequestUtilisation":   100 * d.RequestUtilisation,
			"BreakerOpen":          b2i(d.BreakerOpen),
			"CallsAnswered":        d.Answered,
			"RateLimited":          sum(d.RateLimited),
			"RequestsInOneSecond":  d.Requests1s,
			"RequestsInTenSeconds": d.Requests10s,
			"StoreWritesFailed":    sum(d.WritesFailed),
		}
		units := map[string]string{
			"ReservedTokens": "Count", "ReservedFraction": "None", "ConfiguredTPM": "Count", "EffectiveTPM": "Count",
			"TokenUtilisation": "Percent", "RequestUtilisation": "Percent", "BreakerOpen": "None",
			"CallsAnswered": "Count", "RateLimited": "Count", "RequestsInOneSecond": "Count", "RequestsInTenSeconds": "Count",
			"StoreWritesFailed": "Count",
		}
		for _, c := range causes {
			name := "RateLimited" + title(string(c))
			vals[name], units[name] = d.RateLimited[c], "Count"
		}
		if d.FleetRateLimited != nil {
			vals["FleetRateLimited"], units["FleetRateLimited"] = sum(d.FleetRateLimited), "Count"
		}
		if m := d.Model; m != nil {
			vals["EstimateRatio"], units["EstimateRatio"] = m.Ratio, "None"
			vals["Margin"], units["Margin"] = m.Margin, "None"
			vals["PacingAllowance"], units["PacingAllowance"] = m.Pacing.Milliseconds(), "Milliseconds"
		}
		lines = append(lines, line(v.At, []string{"deployment"}, vals, units))
	}
	types := append([]Type(nil), v.Types...)
	sortTypes(types)
	for _, t := range types {
		vals := map[string]any{"call_type": t.Name, "Calls": t.Calls, "TokensReserved": t.TokensReserved,
			"TokensUsed": t.TokensUsed, "ReservationError": t.ReservationError(),
			"Mended": t.Mended, "Repaired": t.Repaired, "Invalid": t.Invalid,
			"Images": t.Images, "ImageTokens": t.ImageTokens, "TierFallbacks": t.TierFallbacks}
		units := map[string]string{"Calls": "Count", "TokensReserved": "Count", "TokensUsed": "Count", "ReservationError": "None",
			"Mended": "Count", "Repaired": "Count", "Invalid": "Count", "Images": "Count", "ImageTokens": "Count", "TierFallbacks": "Count"}
		lines = append(lines, line(v.At, []string{"call_type"}, vals, units))
		for _, d := range sortedKeys(t.PromptTokens) {
			vals := map[string]any{"call_type": t.Name, "deployment": d, "PromptTokens": t.PromptTokens[d],
				"CachedTokens": t.CachedTokens[d], "CachedShare": t.CachedShare(d)}
			units := map[string]string{"PromptTokens": "Count", "CachedTokens": "Count", "CachedShare": "None"}
			lines = append(lines, line(v.At, []string{"call_type", "deployment"}, vals, units))
		}
	}
	for _, l := range v.Learned {
		vals := map[string]any{"task": l.Task, "LearnedHits": l.Hits, "LearnedHeals": l.Heals, "LearnedMisses": sum(l.Misses)}
		units := map[string]string{"LearnedHits": "Count", "LearnedHeals": "Count", "LearnedMisses": "Count"}
		lines = append(lines, line(v.At, []string{"task"}, vals, units))
	}
	fleet := map[string]any{"HeadroomSpread": v.Spread, "FleetReservedTokens": v.ReservedTokens}
	units := map[string]string{"HeadroomSpread": "None", "FleetReservedTokens": "Count"}
	if v.Agents >= 0 {
		fleet["ActiveAgents"], units["ActiveAgents"] = v.Agents, "Count"
	}
	for _, c := range classes {
		name := "Shed" + title(c.name)
		fleet[name], units[name] = v.Shed[c.c], "Count"
	}
	lines = append(lines, line(v.At, nil, fleet, units))

	e.mu.Lock()
	defer e.mu.Unlock()
	enc := json.NewEncoder(e.w)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("metrics: EMF: %w", err)
		}
	}
	return nil
}

// Run flushes every interval until ctx ends, then once more: a run
// stopped by SIGTERM still leaves its last figures. A failed flush does
// not stop it; it returns the last flush's error joined with how many of
// the others failed, and the first of them.
func (e *EMF) Run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	var failed, flushes int
	var first error
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := e.Flush(fctx)
			if failed > 0 {
				err = errors.Join(fmt.Errorf("%d of %d flushes failed before the last, the first: %w", failed, flushes, first), err)
			}
			return err
		case <-t.C:
			flushes++
			if err := e.Flush(ctx); err != nil && ctx.Err() == nil { // a stop is not a failure
				if failed++; failed == 1 {
					first = err
				}
				if e.Failed != nil {
					e.Failed(err)
				}
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sum[K comparable](m map[K]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func title(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}
