// Package svgplot holds what the benchmarks' hand-drawn SVG plots share:
// a share-of-allowance axis, and a check that a plot is well-formed.
package svgplot

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// PercentAxis draws a panel's left axis from 0 to 100%: a label at each
// quarter, a light grid line between, and the dashed line at 100% (the
// allowance). yOf maps a fraction to the panel's y.
func PercentAxis(w io.Writer, left, width int, yOf func(float64) float64, grid string) {
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left-6, yOf(f)+4, 100*f)
		if f > 0 && f < 1 {
			fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", left, left+width, yOf(f), yOf(f), grid)
		}
	}
	fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="5 3"/>`+"\n", left, left+width, yOf(1), yOf(1))
}

// WellFormed reports whether svg parses as XML, so a browser draws it.
func WellFormed(svg string) error {
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
