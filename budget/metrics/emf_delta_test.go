package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
)

// emfLines parses a flush's lines, each checked against the
// specification, by their dimensions' values ("" for the fleet's line,
// "call_type=click-pick", "call_type=click-pick,deployment=east").
func emfLines(t *testing.T, out []byte) map[string]map[string]any {
	t.Helper()
	byKey := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		o := checkEMF(t, sc.Bytes())
		set := o["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"].([]any)[0].([]any)
		var key []string
		for _, d := range set {
			key = append(key, d.(string)+"="+o[d.(string)].(string))
		}
		k := strings.Join(key, ",")
		if _, ok := byKey[k]; ok {
			t.Fatalf("two lines of %q in one flush", k)
		}
		byKey[k] = o
	}
	return byKey
}

// num is a line's metric as a float, failing the test when it has none.
func num(t *testing.T, lines map[string]map[string]any, key, name string) float64 {
	t.Helper()
	l, ok := lines[key]
	if !ok {
		t.Fatalf("no line of %q", key)
	}
	n, ok := l[name].(json.Number)
	if !ok {
		t.Fatalf("line %q has no metric %s", key, name)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// changing is a source whose view a test changes between flushes.
type changing struct {
	mu  sync.Mutex
	v   metrics.View
	err error
}

func (c *changing) set(f func(v *metrics.View)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.v)
}

func (c *changing) source(context.Context) (metrics.View, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.v, c.err
}

// full is view() with a counter or more of every kind: prompt tokens,
// learned runs, runs by status, refused answers.
func full() metrics.View {
	v := view()
	v.Types[0].Invalid = 1
	v.Types[0].Images, v.Types[0].ImageTokens, v.Types[0].TierFallbacks = 4, 3000, 1
	v.Types[0].PromptTokens = map[string]int64{"east": 9000}
	v.Types[0].CachedTokens = map[string]int64{"east": 4500}
	v.Learned = []metrics.Learned{{Task: "pay-invoice", Hits: 40, Heals: 1, Misses: map[string]int64{"element": 2}}}
	v.Runs = map[string]int64{"succeeded": 7, "failed": 1}
	v.Deployments[0].Answered = 30
	v.Deployments[0].Model = &budget.ModelView{Ratio: 1.1, Margin: 0.8, Pacing: 250 * time.Millisecond}
	return v
}

// The second line of the same dimensions holds what each counter rose
// since the first; the gauges hold what they are now.
func TestEMFCountersAreDeltas(t *testing.T) {
	src := &changing{v: full()}
	var buf bytes.Buffer
	e := metrics.NewEMF(&buf, src.source)
	ctx := context.Background()
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	first := emfLines(t, buf.Bytes())
	// The first line is the whole count since the process started.
	for _, c := range []struct {
		key, name string
		want      float64
	}{
		{"call_type=click-pick", "Calls", 10}, {"call_type=click-pick", "TokensReserved", 12000},
		{"deployment=east", "RateLimitedAdjustment", 2}, {"deployment=east", "CallsAnswered", 30},
		{"status=succeeded", "Runs", 7}, {"status=failed", "Runs", 1},
		{"", "ShedBackground", 3}, {"", "Calls", 10}, {"", "Invalid", 1},
	} {
		if got := num(t, first, c.key, c.name); got != c.want {
			t.Errorf("first flush: %q %s = %v, want %v", c.key, c.name, got, c.want)
		}
	}

	src.set(func(v *metrics.View) {
		v.At = v.At.Add(10 * time.Second)
		ty := &v.Types[0]
		ty.Calls += 5
		ty.TokensReserved += 1000
		ty.TokensUsed += 1000 // 13000 charged over 4000 used since the start
		ty.Mended++
		ty.Invalid += 2
		ty.Images += 3
		ty.ImageTokens += 900
		ty.PromptTokens = map[string]int64{"east": 9600}
		ty.CachedTokens = map[string]int64{"east": 4800}
		d := &v.Deployments[0]
		d.Answered += 6
		d.RateLimited = map[budget.Cause]int64{budget.CauseAdjustment: 2, budget.CauseTokens: 4}
		d.WritesFailed = map[string]int64{budget.WriteBreaker: 1, budget.WriteSettle: 2}
		d.FleetRateLimited = map[budget.Cause]int64{budget.CauseAdjustment: 3}
		d.ReservedFraction, d.Reserved, d.EffectiveTPM = 0.75, 60000, 90000
		d.Model = &budget.ModelView{Ratio: 1.2, Margin: 0.7, Pacing: 300 * time.Millisecond}
		v.Learned = []metrics.Learned{{Task: "pay-invoice", Hits: 44, Heals: 1, Misses: map[string]int64{"element": 2, "none": 1}}}
		v.Runs = map[string]int64{"succeeded": 9, "failed": 1, "stuck": 1}
		v.Shed = map[budget.Class]int64{budget.Background: 5, budget.Interactive: 1}
		v.Agents, v.Spread, v.ReservedTokens = 15, 0.65, 65000
	})
	buf.Reset()
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	second := emfLines(t, buf.Bytes())
	for _, c := range []struct {
		key, name string
		want      float64
	}{
		// counters: what they rose
		{"call_type=click-pick", "Calls", 5}, {"call_type=click-pick", "TokensReserved", 1000},
		{"call_type=click-pick", "TokensUsed", 1000}, {"call_type=click-pick", "Mended", 1},
		{"call_type=click-pick", "Repaired", 0}, {"call_type=click-pick", "Invalid", 2},
		{"call_type=click-pick", "Images", 3}, {"call_type=click-pick", "ImageTokens", 900},
		{"call_type=click-pick", "TierFallbacks", 0},
		{"call_type=click-pick,deployment=east", "PromptTokens", 600},
		{"call_type=click-pick,deployment=east", "CachedTokens", 300},
		{"deployment=east", "CallsAnswered", 6}, {"deployment=east", "RateLimited", 4},
		{"deployment=east", "RateLimitedTokens", 4}, {"deployment=east", "RateLimitedAdjustment", 0},
		{"deployment=east", "StoreWritesFailed", 2},
		{"deployment=west", "CallsAnswered", 0},
		{"task=pay-invoice", "LearnedHits", 4}, {"task=pay-invoice", "LearnedHeals", 0},
		{"task=pay-invoice", "LearnedMisses", 1},
		{"status=succeeded", "Runs", 2}, {"status=failed", "Runs", 0}, {"status=stuck", "Runs", 1},
		{"", "ShedBackground", 2}, {"", "ShedInteractive", 1}, {"", "Calls", 5}, {"", "Invalid", 2},
		// gauges: what they are
		{"deployment=east", "ReservedFraction", 0.75}, {"deployment=east", "ReservedTokens", 60000},
		{"deployment=east", "EffectiveTPM", 90000}, {"deployment=east", "ConfiguredTPM", 100000},
		{"deployment=east", "TPMBelowConfigured", 10000}, {"deployment=west", "TPMBelowConfigured", 0},
		{"deployment=east", "FleetRateLimited", 3}, {"deployment=east", "BreakerOpen", 1},
		{"deployment=east", "TokenUtilisation", 40}, {"deployment=east", "EstimateRatio", 1.2},
		{"deployment=east", "Margin", 0.7}, {"deployment=east", "PacingAllowance", 300},
		{"", "ActiveAgents", 15}, {"", "HeadroomSpread", 0.65}, {"", "FleetReservedTokens", 65000},
		// ratios of counters: the process's, since it started
		{"call_type=click-pick", "ReservationError", 13000.0 / 4000},
		{"call_type=click-pick,deployment=east", "CachedShare", 0.5},
	} {
		if got := num(t, second, c.key, c.name); got != c.want {
			t.Errorf("second flush: %q %s = %v, want %v", c.key, c.name, got, c.want)
		}
	}
	if len(second) != len(first)+1 { // and stuck's
		t.Errorf("%d lines, then %d; want one more, for the new status", len(first), len(second))
	}
}

// A counter that went down writes 0, and what it rises from there is
// written next; a flush that read nothing, or could not write, loses
// nothing: the next line's delta spans it.
func TestEMFDeltasLoseNothing(t *testing.T) {
	src := &changing{v: full()}
	var buf bytes.Buffer
	w := &failing{w: &buf}
	e := metrics.NewEMF(w, src.source)
	ctx := context.Background()
	calls := func() float64 {
		t.Helper()
		defer buf.Reset()
		return num(t, emfLines(t, buf.Bytes()), "call_type=click-pick", "Calls")
	}
	flush := func() {
		t.Helper()
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	setCalls := func(n int64) { src.set(func(v *metrics.View) { v.Types[0].Calls = n }) }

	flush()
	if got := calls(); got != 10 {
		t.Fatalf("first flush: %v calls, want 10", got)
	}
	setCalls(4) // down: it should not happen
	flush()
	if got := calls(); got != 0 {
		t.Errorf("a counter that went down: %v, want 0", got)
	}
	setCalls(6)
	flush()
	if got := calls(); got != 2 {
		t.Errorf("after it went down to 4, up to 6: %v, want 2", got)
	}

	// The source fails once: nothing written, nothing lost.
	setCalls(9)
	src.err = errors.New("the store went away")
	if err := e.Flush(ctx); err == nil {
		t.Fatal("a source that failed: no error")
	}
	src.err = nil
	if buf.Len() != 0 {
		t.Errorf("lines written from a source that failed: %s", buf.Bytes())
	}
	setCalls(11)
	flush()
	if got := calls(); got != 5 {
		t.Errorf("after a flush that read nothing: %v, want 5 (6 to 11)", got)
	}

	// The writer refuses every line: the next flush says what they would
	// have.
	setCalls(14)
	w.refuse = true
	if err := e.Flush(ctx); !errors.Is(err, errFull) {
		t.Fatalf("a writer that refused: %v", err)
	}
	w.refuse = false
	buf.Reset()
	flush()
	if got := calls(); got != 3 {
		t.Errorf("after a flush that wrote nothing: %v, want 3 (11 to 14)", got)
	}
}

// Summed over every flush, the deltas are the count: as CloudWatch sums
// them over a period.
func TestEMFDeltasSumToTheCount(t *testing.T) {
	src := &changing{v: full()}
	var buf bytes.Buffer
	e := metrics.NewEMF(&buf, src.source)
	var summed float64
	for i := range 6 {
		src.set(func(v *metrics.View) { v.Types[0].TokensUsed += int64(100 * i) })
		if err := e.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		summed += num(t, emfLines(t, buf.Bytes()), "call_type=click-pick", "TokensUsed")
		buf.Reset()
	}
	if want := float64(3000 + 100*(0+1+2+3+4+5)); summed != want {
		t.Errorf("deltas sum to %v, want the count %v", summed, want)
	}
}

// failing writes to w until refuse is set.
type failing struct {
	w      io.Writer
	refuse bool
}

func (f *failing) Write(p []byte) (int, error) {
	if f.refuse {
		return 0, errFull
	}
	return f.w.Write(p)
}
