package fleet

import (
	"fmt"
	"io"
	"strings"
)

// colours of the deployments' lines, in order.
var colours = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// Plot writes an SVG with one panel per strategy: each deployment's share
// of its allowance (TPM × margin) held in the current window, over time.
// Lines that move together mean the fleet fills every deployment in
// proportion; a line pinned at the top while another lags is the spread.
func Plot(w io.Writer, rows []Row, names []string) error {
	const width, panel, left, right, top = 900, 200, 60, 20, 30
	height := top + len(rows)*(panel+40)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, n := range names {
		fmt.Fprintf(&b, `<text x="%d" y="18" fill="%s">■ %s</text>`+"\n", left+i*160, colours[i%len(colours)], n)
	}
	for p, r := range rows {
		y0 := top + p*(panel+40) + 20
		plotW := width - left - right
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-5, r.Strategy)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, plotW, panel)
		// y: 0 to 1.2 of the allowance; the dashed line is limit × margin.
		yOf := func(f float64) float64 { return float64(y0+panel) - min(f, 1.2)/1.2*float64(panel) }
		for _, f := range []float64{0, 0.5, 1} {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left-5, yOf(f)+4, 100*f)
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>`+"\n", left, left+plotW, yOf(1), yOf(1))
		if len(r.Samples) == 0 {
			continue
		}
		span := r.Samples[len(r.Samples)-1].At.Seconds()
		if span <= 0 {
			span = 1
		}
		for d := range names {
			var pts []string
			for _, s := range r.Samples {
				if d < len(s.Fractions) {
					x := float64(left) + s.At.Seconds()/span*float64(plotW)
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, yOf(s.Fractions[d])))
				}
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colours[d%len(colours)], strings.Join(pts, " "))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%.0f s</text>`+"\n", left+plotW, y0+panel+15, span)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
