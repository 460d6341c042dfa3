package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/svgplot"
)

// plotRows are the two budget modes over three 6 s windows, for the plot
// alone: no agents run.
func plotRows() []Row {
	var rows []Row
	for i, mode := range []string{"shared", "per-process"} {
		r := Row{Budget: mode, Agents: 12, Succeeded: 12 - 5*i, RateLimited: int64(37 * i), Window: 6 * time.Second, WallS: 20 + 6*float64(1-i), FloorS: 18}
		for k := range 130 {
			at := time.Duration(k) * 200 * time.Millisecond
			f := float64(at%(6*time.Second)) / float64(4*time.Second)
			r.Samples = append(r.Samples, Sample{At: at, Fraction: f, RateLimited: int64(i * min(37, k*37/100))})
		}
		rows = append(rows, r)
	}
	return rows
}

func TestPlotLabelsAxesAndLines(t *testing.T) {
	var svg strings.Builder
	if err := Plot(&svg, plotRows()); err != nil {
		t.Fatal(err)
	}
	out := svg.String()
	if err := svgplot.WellFormed(out); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	for _, want := range []string{
		"time since the agents started (s)", // the x axis
		"tokens in window, % of allowance",  // the left axis
		"429s so far (count)",               // the right axis
		"allowance: Σ limit × margin",       // the dashed line, in the legend
		">floor<",                           // the floor, in the legend and the panels
		"shared budget: 12 agents, 12 of them succeeded, 0 429s",
		"per-process budget: 12 agents, 7 of them succeeded, 37 429s",
		">37<", // the right axis' top
		">24<", // the last window's start, in seconds
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
	if n := strings.Count(out, "<polyline"); n != 4 {
		t.Errorf("%d lines, want 4 (fill and 429s × 2 modes)", n)
	}
}
