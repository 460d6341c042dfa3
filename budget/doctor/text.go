package doctor

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// width is where the readable list wraps its sentences.
const width = 100

// WriteText writes the report for people: each finding with its severity,
// check and deployments, the message and the fix wrapped beneath, then
// the probes as a table and a closing count.
func (r Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, f := range r.Findings {
		head := fmt.Sprintf("%-7s  %s", f.Severity, f.Check)
		if len(f.Deployments) > 0 {
			head += ": " + strings.Join(f.Deployments, ", ")
		}
		fmt.Fprintln(b, head)
		wrap(b, "  ", f.Message)
		wrap(b, "  fix: ", f.Fix)
		fmt.Fprintln(b)
	}
	if len(r.Probed) > 0 {
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(b, "probed:")
		fmt.Fprintln(tw, "  deployment\tstatus\tmodel\tlimit tokens\tlimit requests\tms")
		for _, p := range r.Probed {
			status, model := strconv.Itoa(p.Status), p.Model
			if p.Status == 0 {
				status = "-"
			}
			if model == "" {
				model = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", p.Deployment, status, model, known(p.LimitTokens), known(p.LimitRequests), p.LatencyMS)
		}
		tw.Flush()
		fmt.Fprintln(b)
	}
	e, wn, i := r.Count(Error), r.Count(Warning), r.Count(Info)
	switch {
	case e+wn+i == 0:
		fmt.Fprintf(b, "%s: %s, no findings\n", r.Config, plural(r.Deployments, "deployment"))
	case e+wn == 0:
		fmt.Fprintf(b, "%s: %s, %s, nothing to fix (infos do not fail the check)\n", r.Config, plural(r.Deployments, "deployment"), plural(i, "info"))
	default:
		fmt.Fprintf(b, "%s: %s, %s, %s, %s\n", r.Config, plural(r.Deployments, "deployment"), plural(e, "error"), plural(wn, "warning"), plural(i, "info"))
	}
	return b.Flush()
}

func known(n int64) string {
	if n < 0 {
		return "-"
	}
	return num(n)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// wrap writes s after prefix, wrapped at width, continuation lines
// indented as far as the prefix.
func wrap(w io.Writer, prefix, s string) {
	indent := strings.Repeat(" ", len(prefix))
	line, empty := prefix, true
	for _, word := range strings.Fields(s) {
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line, empty = line+word, false
	}
	fmt.Fprintln(w, line)
}
