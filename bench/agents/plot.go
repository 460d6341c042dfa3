package agents

import (
	"fmt"
	"io"
	"strings"
)

// Plot writes an SVG with one panel per budget mode: the share of the
// budget's allowance (Σ limit × margin) the current window holds, summed
// over the deployments, and the 429s the simulator has sent so far, over
// time. A shared budget fills each window to its allowance and stops
// there; per-process budgets push past it until the deployments refuse.
func Plot(w io.Writer, rows []Row) error {
	const width, panel, left, right, top, gap = 900, 220, 70, 70, 40, 70
	height := top + len(rows)*(panel+gap)
	var peak429 int64 = 1
	var span float64 = 1
	for _, r := range rows {
		if n := len(r.Samples); n > 0 {
			peak429 = max(peak429, r.Samples[n-1].RateLimited)
			span = max(span, r.Samples[n-1].At.Seconds())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-weight="bold">Real agents on one budget: the window's fill and the 429s, shared store against per-process budgets</text>`+"\n", left)
	plotW := width - left - right
	for p, r := range rows {
		y0 := top + p*(panel+gap) + 20
		title := fmt.Sprintf("%s budget: %d agents, %d of them succeeded, %d 429s", r.Budget, r.Agents, r.Succeeded, r.RateLimited)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-6, title)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, plotW, panel)
		// Left axis: 0 to 130% of the allowance; the raw limit is 1/margin.
		yOf := func(f float64) float64 { return float64(y0+panel) - min(f, 1.3)/1.3*float64(panel) }
		for _, f := range []float64{0, 0.5, 1} {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left-5, yOf(f)+4, 100*f)
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>`+"\n", left, left+plotW, yOf(1), yOf(1))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="#666">allowance (Σ limit × margin)</text>`+"\n", left+5, yOf(1)-4)
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(-90)" text-anchor="middle">tokens in the window, %% of allowance</text>`+"\n", left-45, y0+panel/2)
		// Right axis: the 429s so far.
		rOf := func(n int64) float64 { return float64(y0+panel) - float64(n)/float64(peak429)*float64(panel) }
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">0</text><text x="%d" y="%.1f">%d</text>`+"\n", left+plotW+5, rOf(0)+4, left+plotW+5, rOf(peak429)+4, peak429)
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(90)" text-anchor="middle" fill="#d62728">429s so far</text>`+"\n", left+plotW+45, y0+panel/2)
		xOf := func(s float64) float64 { return float64(left) + s/span*float64(plotW) }
		var fill, limited []string
		for _, s := range r.Samples {
			if s.At < 0 {
				continue
			}
			x := xOf(s.At.Seconds())
			fill = append(fill, fmt.Sprintf("%.1f,%.1f", x, yOf(s.Fraction)))
			limited = append(limited, fmt.Sprintf("%.1f,%.1f", x, rOf(s.RateLimited)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="%s"/>`+"\n", strings.Join(fill, " "))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#d62728" stroke-width="1.5" points="%s"/>`+"\n", strings.Join(limited, " "))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#1f77b4">— tokens in the window</text><text x="%d" y="%d" fill="#d62728">— 429s so far</text>`+"\n",
			left+plotW-300, y0+15, left+plotW-140, y0+15)
		// Time axis, with a line at each window's start.
		for at := r.Window; at.Seconds() <= span; at += r.Window {
			x := xOf(at.Seconds())
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", x, x, y0, y0+panel)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.0f</text>`+"\n", x, y0+panel+15, at.Seconds())
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">0</text>`+"\n", left, y0+panel+15)
		if r.FloorS > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#2ca02c" stroke-dasharray="2 2"/><text x="%.1f" y="%d" fill="#2ca02c">floor</text>`+"\n",
				xOf(r.FloorS), xOf(r.FloorS), y0, y0+panel, xOf(r.FloorS)+3, y0+panel-5)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds since the agents started, a line per window (wall %.1f s, floor %.1f s)</text>`+"\n", left+plotW/2, y0+panel+32, r.WallS, r.FloorS)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
