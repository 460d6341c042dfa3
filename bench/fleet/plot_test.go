package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/svgplot"
)

// sampleRows are two strategies over two 6 s windows, for the plot alone.
func sampleRows() []Row {
	var rows []Row
	for _, s := range []string{"round-robin", "headroom"} {
		r := Row{Strategy: s, Calls: 100, RateLimited: 7, Window: 6 * time.Second, Margin: 0.85}
		for i := range 60 {
			at := time.Duration(i) * 200 * time.Millisecond
			f := float64(at%(6*time.Second)) / float64(3*time.Second)
			r.Samples = append(r.Samples, Sample{At: at, Fractions: []float64{f, f * 0.9, f * 1.1}})
		}
		rows = append(rows, r)
	}
	return rows
}

func TestPlotLabelsAxesAndLines(t *testing.T) {
	var svg strings.Builder
	if err := Plot(&svg, sampleRows(), []string{"gpt4o-a", "gpt4o-b", "gpt4o-c"}); err != nil {
		t.Fatal(err)
	}
	out := svg.String()
	if err := svgplot.WellFormed(out); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	for _, want := range []string{
		"time since the fleet started (s)",    // the x axis
		"tokens in window, % of allowance",    // the y axis
		"allowance: TPM × margin (100%)",      // the dashed line
		"limit: TPM (118%)",                   // the dotted one, 1 ÷ 0.85
		">gpt4o-a<", ">gpt4o-b<", ">gpt4o-c<", // the legend
		">round-robin<", ">headroom<", // the panels
		">12<", // the last window's end, in seconds
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
	if n := strings.Count(out, "<polyline"); n != 6 {
		t.Errorf("%d lines, want 6 (3 deployments × 2 strategies)", n)
	}
}
