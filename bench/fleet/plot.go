package fleet

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/internal/svgplot"
)

// colours of the deployments' lines, in order.
var colours = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// Plot writes an SVG with one panel per strategy: each deployment's share
// of its allowance (TPM × margin) held in the current window, over the
// seconds since the fleet started, with a grid line at each window's
// start. Lines that move together mean the fleet fills every deployment
// in proportion; a line pinned at the top while another lags is the
// spread. The dashed line is the allowance (100%), the dotted one the
// deployment's raw limit (100% ÷ margin), where the simulator refuses.
func Plot(w io.Writer, rows []Row, names []string) error {
	const (
		width, left, right = 900, 84, 24
		header             = 66 // the title and the legend
		title, panel, foot = 22, 180, 44
		stride             = title + panel + foot
		yMax               = 1.25 // the top of the y axis, as a share of the allowance
	)
	plotW := width - left - right
	height := header + len(rows)*stride + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">headroom bench fleet: each deployment's tokens in the current window, as a share of its allowance, per strategy</text>`+"\n", left)

	// The legend: a line per deployment, then the two reference lines.
	x := left
	for i, n := range names {
		c := colours[i%len(colours)]
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="42" y2="42" stroke="%s" stroke-width="2.5"/><text x="%d" y="46">%s</text>`+"\n", x, x+22, c, x+28, html.EscapeString(n))
		x += 28 + 8*len(n) + 24
	}
	margin := 0.0
	if len(rows) > 0 {
		margin = rows[0].Margin
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="42" y2="42" stroke="#555" stroke-dasharray="5 3"/><text x="%d" y="46">allowance: TPM × margin (100%%)</text>`+"\n", x, x+22, x+28)
	x += 28 + 200
	if margin > 0 && margin < 1 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="42" y2="42" stroke="#555" stroke-dasharray="1 3"/><text x="%d" y="46">limit: TPM (%.0f%%)</text>`+"\n", x, x+22, x+28, 100/margin)
	}

	for p, r := range rows {
		y0 := header + p*stride + title
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-6, html.EscapeString(r.Strategy))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#444">%d calls, %d 429s</text>`+"\n", left+plotW, y0-6, r.Calls, r.RateLimited)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, plotW, panel)
		yOf := func(f float64) float64 { return float64(y0+panel) - min(max(f, 0), yMax)/yMax*float64(panel) }

		// The y axis: ticks, the reference lines, the title.
		svgplot.PercentAxis(&b, left, plotW, yOf, "#eee")
		if margin > 0 && margin < 1 && 1/margin <= yMax {
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="1 3"/>`+"\n", left, left+plotW, yOf(1/margin), yOf(1/margin))
		}
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(-90)" text-anchor="middle" font-size="11">tokens in window, %% of allowance</text>`+"\n", left-50, y0+panel/2)

		// The x axis: seconds since the fleet started, a grid line per window.
		span := 1.0
		if n := len(r.Samples); n > 0 {
			span = max(span, r.Samples[n-1].At.Seconds())
		}
		if r.Window > 0 {
			span = math.Ceil(span/r.Window.Seconds()-1e-9) * r.Window.Seconds()
		}
		xOf := func(s float64) float64 { return float64(left) + s/span*float64(plotW) }
		step := r.Window
		if step <= 0 {
			step = time.Duration(span/4*1000) * time.Millisecond
		}
		for at := time.Duration(0); at.Seconds() <= span+1e-9 && step > 0; at += step {
			gx := xOf(at.Seconds())
			if at > 0 && at.Seconds() < span-1e-9 {
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", gx, gx, y0, y0+panel)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", gx, y0+panel+15, math.Round(at.Seconds()*10)/10)
		}
		xTitle := "time since the fleet started (s)"
		if r.Window > 0 {
			xTitle = fmt.Sprintf("time since the fleet started (s); a grid line at each window's start (windows of %g s)", r.Window.Seconds())
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", left+plotW/2, y0+panel+31, xTitle)

		for d := range names {
			var pts []string
			for _, s := range r.Samples {
				if d < len(s.Fractions) && s.At >= 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(s.At.Seconds()), yOf(s.Fractions[d])))
				}
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colours[d%len(colours)], strings.Join(pts, " "))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
