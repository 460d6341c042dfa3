package agents

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/headroom-agent/headroom/internal/svgplot"
)

// Plot writes an SVG with one panel per budget mode: the share of the
// budget's allowance (Σ limit × margin) the current window holds, summed
// over the deployments (left axis), and the 429s the simulator has sent
// so far (right axis), over the seconds since the agents started, with a
// grid line at each window's start. A shared budget fills each window to
// its allowance and stops there; per-process budgets push past it until
// the deployments refuse.
func Plot(w io.Writer, rows []Row) error {
	const (
		width, left, right = 900, 84, 84
		header             = 66 // the title and the legend
		title, panel, foot = 22, 220, 46
		stride             = title + panel + foot
		yMax               = 1.3 // the top of the left axis, as a share of the allowance
	)
	height := header + len(rows)*stride + 8
	var peak429 int64 = 1
	var span float64 = 1
	for _, r := range rows {
		if n := len(r.Samples); n > 0 {
			peak429 = max(peak429, r.Samples[n-1].RateLimited)
			span = max(span, r.Samples[n-1].At.Seconds())
		}
	}
	const fillColour, limitedColour, floorColour = "#1f77b4", "#d62728", "#2ca02c"
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">headroom bench agents: the window's fill and the 429s, shared store against per-process budgets</text>`+"\n", left)
	// The legend, once for every panel.
	legend := []struct{ stroke, dash, label string }{
		{fillColour, "", "tokens in the window, % of allowance (left axis)"},
		{limitedColour, "", "429s so far (right axis)"},
		{"#555", "5 3", "allowance: Σ limit × margin"},
		{floorColour, "2 2", "floor"},
	}
	x := left
	for _, l := range legend {
		dash := ""
		if l.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, l.dash)
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="42" y2="42" stroke="%s" stroke-width="2"%s/><text x="%d" y="46">%s</text>`+"\n", x, x+22, l.stroke, dash, x+28, html.EscapeString(l.label))
		x += 28 + int(5.6*float64(len([]rune(l.label)))) + 18
	}

	plotW := width - left - right
	for p, r := range rows {
		y0 := header + p*stride + title
		head := fmt.Sprintf("%s budget: %d agents, %d of them succeeded, %d 429s", r.Budget, r.Agents, r.Succeeded, r.RateLimited)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-6, html.EscapeString(head))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, plotW, panel)
		// Left axis: 0 to 130% of the allowance.
		yOf := func(f float64) float64 { return float64(y0+panel) - min(max(f, 0), yMax)/yMax*float64(panel) }
		svgplot.PercentAxis(&b, left, plotW, yOf, "#f0f0f0")
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(-90)" text-anchor="middle" fill="%s" font-size="11">tokens in window, %% of allowance</text>`+"\n", left-50, y0+panel/2, fillColour)
		// Right axis: the 429s so far, a count.
		rOf := func(n int64) float64 { return float64(y0+panel) - float64(n)/float64(peak429)*float64(panel) }
		for _, n := range []int64{0, peak429 / 2, peak429} {
			if n == peak429/2 && (n == 0 || n == peak429) {
				continue
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="%s">%d</text>`+"\n", left+plotW+6, rOf(n)+4, limitedColour, n)
		}
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(90)" text-anchor="middle" fill="%s" font-size="11">429s so far (count)</text>`+"\n", left+plotW+50, y0+panel/2, limitedColour)
		// Time axis: seconds since the agents started, a line per window.
		xOf := func(s float64) float64 { return float64(left) + s/span*float64(plotW) }
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">0</text>`+"\n", left, y0+panel+15)
		for at := r.Window; r.Window > 0 && at.Seconds() <= span; at += r.Window {
			gx := xOf(at.Seconds())
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", gx, gx, y0, y0+panel)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", gx, y0+panel+15, at.Seconds())
		}
		if r.FloorS > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-dasharray="2 2"/><text x="%.1f" y="%d" fill="%s">floor</text>`+"\n",
				xOf(r.FloorS), xOf(r.FloorS), y0, y0+panel, floorColour, xOf(r.FloorS)+3, y0+panel-5, floorColour)
		}
		xTitle := fmt.Sprintf("time since the agents started (s); a grid line at each window's start (windows of %g s); wall %.1f s, floor %.1f s", r.Window.Seconds(), r.WallS, r.FloorS)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", left+plotW/2, y0+panel+32, xTitle)

		var fill, limited []string
		for _, s := range r.Samples {
			if s.At < 0 {
				continue
			}
			sx := xOf(s.At.Seconds())
			fill = append(fill, fmt.Sprintf("%.1f,%.1f", sx, yOf(s.Fraction)))
			limited = append(limited, fmt.Sprintf("%.1f,%.1f", sx, rOf(s.RateLimited)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", fillColour, strings.Join(fill, " "))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", limitedColour, strings.Join(limited, " "))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
