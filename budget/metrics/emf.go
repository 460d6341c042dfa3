package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "headroom"

// An EMF writes the view as CloudWatch Embedded Metric Format lines, one
// JSON object a line: one per deployment (dimension deployment), one per
// call type (dimension call_type) and per call type and deployment, one
// per learned task (task), one per status of the runs ended (status), one
// for the fleet (no dimension).
//
// Counters are written as deltas: each line holds what a counter rose
// since this EMF's last line of the same dimensions (the first line, the
// whole count since the process started). CloudWatch sums a metric's
// values over a period and over every log stream that writes it, so a
// process's running total written every 10 s would be counted six times
// a minute, and once more for each agent: a sum of nothing. A delta sums
// to the count: Sum over any period, across all the agents, is the
// fleet's count in it. Gauges (the store's figures, the learned model, the
// census's window of 429s) are written as they are, and read with Maximum
// or Minimum; so are the ratios of counters (ReservationError,
// CachedShare), the process's since it started.
type EMF struct {
	// Failed, when set, is told of each flush of Run's ticks that fails
	// (the source unreadable, the writer refusing); Run goes on, and
	// counts them in what it returns.
	Failed func(error)

	w   io.Writer
	src Source

	mu sync.Mutex
	// last is each counter as last written, by its line's dimension
	// values and its name: what the next line's delta is from.
	last map[string]int64
}

// NewEMF writes src's view to w.
func NewEMF(w io.Writer, src Source) *EMF {
	return &EMF{w: w, src: src, last: map[string]int64{}}
}

type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// emfLine is one line before it is written: its dimensions, its gauges,
// and its counters as the view holds them (totals since the process
// started), which are written as deltas.
type emfLine struct {
	dims     []string // the dimensions' names, in order
	vals     map[string]any
	units    map[string]string
	counters map[string]int64
}

// newLine is a line of the dimensions named and valued in pairs.
func newLine(pairs ...string) *emfLine {
	l := &emfLine{vals: map[string]any{}, units: map[string]string{}, counters: map[string]int64{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		l.dims = append(l.dims, pairs[i])
		l.vals[pairs[i]] = pairs[i+1]
	}
	return l
}

// gauge writes v as it is.
func (l *emfLine) gauge(name string, v any, unit string) { l.vals[name], l.units[name] = v, unit }

// counter writes what total rose since the last line of these dimensions.
func (l *emfLine) counter(name string, total int64) { l.counters[name], l.units[name] = total, "Count" }

// key is the line's dimension values, quoted, before a counter's name.
func (l *emfLine) key() string {
	var b strings.Builder
	for _, d := range l.dims {
		b.WriteString(strconv.Quote(d) + "=" + strconv.Quote(l.vals[d].(string)) + ",")
	}
	return b.String()
}

// object is the line to write, its counters the deltas from last, and
// the totals to remember once it is written.
func (l *emfLine) object(at time.Time, last map[string]int64) (map[string]any, map[string]int64) {
	values := maps.Clone(l.vals)
	totals := make(map[string]int64, len(l.counters))
	prefix := l.key()
	for name, n := range l.counters {
		k := prefix + name
		// A counter that went down (it should not) rose by nothing; the
		// next delta is from where it is now.
		values[name] = max(n-last[k], 0)
		totals[k] = n
	}
	d := directive{Namespace: Namespace, Dimensions: [][]string{l.dims}}
	if l.dims == nil {
		d.Dimensions = [][]string{{}}
	}
	for _, name := range sortedKeys(l.units) {
		d.Metrics = append(d.Metrics, metric{Name: name, Unit: l.units[name]})
	}
	values["_aws"] = map[string]any{"Timestamp": at.UnixMilli(), "CloudWatchMetrics": []directive{d}}
	return values, totals
}

// lines is the view as the lines to write.
func lines(v View) []*emfLine {
	var out []*emfLine
	for _, d := range v.Deployments {
		l := newLine("deployment", d.Name)
		l.gauge("ReservedTokens", d.Reserved, "Count")
		l.gauge("ReservedFraction", d.ReservedFraction, "None")
		l.gauge("ConfiguredTPM", d.ConfiguredTPM, "Count")
		l.gauge("EffectiveTPM", d.EffectiveTPM, "Count")
		// What Azure has taken off the configured limit, for the moment:
		// above 0 on any deployment is one alarm's query (MAX over the
		// deployments), where comparing two metrics of deployments whose
		// names the alarm cannot know is none.
		l.gauge("TPMBelowConfigured", max(d.ConfiguredTPM-d.EffectiveTPM, 0), "Count")
		l.gauge("TokenUtilisation", 100*d.TokenUtilisation, "Percent")
		l.gauge("RequestUtilisation", 100*d.RequestUtilisation, "Percent")
		l.gauge("BreakerOpen", b2i(d.BreakerOpen), "None")
		l.gauge("RequestsInOneSecond", d.Requests1s, "Count")
		l.gauge("RequestsInTenSeconds", d.Requests10s, "Count")
		l.counter("CallsAnswered", d.Answered)
		l.counter("RateLimited", sum(d.RateLimited))
		for _, c := range causes {
			l.counter("RateLimited"+title(string(c)), d.RateLimited[c])
		}
		l.counter("StoreWritesFailed", sum(d.WritesFailed))
		if d.FleetRateLimited != nil {
			// The census's count of this window and the last: a gauge.
			l.gauge("FleetRateLimited", sum(d.FleetRateLimited), "Count")
		}
		if m := d.Model; m != nil {
			l.gauge("EstimateRatio", m.Ratio, "None")
			l.gauge("Margin", m.Margin, "None")
			l.gauge("PacingAllowance", m.Pacing.Milliseconds(), "Milliseconds")
		}
		out = append(out, l)
	}
	types := append([]Type(nil), v.Types...)
	sortTypes(types)
	var calls, invalid int64
	for _, t := range types {
		l := newLine("call_type", t.Name)
		l.counter("Calls", t.Calls)
		l.counter("TokensReserved", t.TokensReserved)
		l.counter("TokensUsed", t.TokensUsed)
		l.gauge("ReservationError", t.ReservationError(), "None")
		l.counter("Mended", t.Mended)
		l.counter("Repaired", t.Repaired)
		l.counter("Invalid", t.Invalid)
		l.counter("Images", t.Images)
		l.counter("ImageTokens", t.ImageTokens)
		l.counter("TierFallbacks", t.TierFallbacks)
		out = append(out, l)
		calls, invalid = calls+t.Calls, invalid+t.Invalid
		for _, d := range sortedKeys(t.PromptTokens) {
			l := newLine("call_type", t.Name, "deployment", d)
			l.counter("PromptTokens", t.PromptTokens[d])
			l.counter("CachedTokens", t.CachedTokens[d])
			l.gauge("CachedShare", t.CachedShare(d), "None")
			out = append(out, l)
		}
	}
	for _, lr := range v.Learned {
		l := newLine("task", lr.Task)
		l.counter("LearnedHits", lr.Hits)
		l.counter("LearnedHeals", lr.Heals)
		l.counter("LearnedMisses", sum(lr.Misses))
		out = append(out, l)
	}
	for _, status := range sortedKeys(v.Runs) {
		l := newLine("status", status)
		l.counter("Runs", v.Runs[status])
		out = append(out, l)
	}
	fleet := newLine()
	fleet.gauge("HeadroomSpread", v.Spread, "None")
	fleet.gauge("FleetReservedTokens", v.ReservedTokens, "Count")
	if v.Agents >= 0 {
		fleet.gauge("ActiveAgents", v.Agents, "Count")
	}
	for _, c := range classes {
		fleet.counter("Shed"+title(c.name), v.Shed[c.c])
	}
	// The calls and the answers refused after a repair over every call
	// type, without a dimension: an alarm's metric math on the fleet's
	// share of invalid answers needs metrics it can name, and it cannot
	// know the call types' names.
	fleet.counter("Calls", calls)
	fleet.counter("Invalid", invalid)
	return append(out, fleet)
}

// Flush writes one set of lines now.
func (e *EMF) Flush(ctx context.Context) error {
	// One flush at a time, and the view read inside it: a delta is from
	// the line last written, and a view read before the last flush's
	// would count backwards.
	e.mu.Lock()
	defer e.mu.Unlock()
	v, err := e.src(ctx)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	enc := json.NewEncoder(e.w)
	for _, l := range lines(v) {
		obj, totals := l.object(v.At, e.last)
		if err := enc.Encode(obj); err != nil {
			// What this line would have said is in the next one's deltas.
			return fmt.Errorf("metrics: EMF: %w", err)
		}
		maps.Copy(e.last, totals)
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
