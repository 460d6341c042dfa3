package svgplot

import (
	"strings"
	"testing"
)

func TestPercentAxis(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg">`)
	PercentAxis(&b, 60, 400, func(f float64) float64 { return 200 - 100*f }, "#eee")
	b.WriteString(`</svg>`)
	svg := b.String()
	if err := WellFormed(svg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">0%<", ">25%<", ">100%<", `y1="100.0"`, `stroke-dasharray="5 3"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in\n%s", want, svg)
		}
	}
	if WellFormed(`<svg><text>`) == nil {
		t.Error("an unclosed element passes")
	}
}
