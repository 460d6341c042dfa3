package calibrate

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/headroom-agent/headroom/budget"
)

// thousands groups digits as the README's figures are: 120,000.
var thousands = message.NewPrinter(language.English)

// width is where the summaries wrap.
const width = 100

// Config is what the advice under the table weighs the results against.
type Config struct {
	// Name is the config file's, for the advice.
	Name string
	// Refund and Margin are the config's (after its defaults).
	Refund budget.Policy
	Margin float64
}

// WriteText writes the results for people: a table, each deployment's
// evidence or error beneath it, and what to set in the config.
func WriteText(w io.Writer, rs []Result, cfg Config) error {
	b := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "deployment\treleased\trecommendation\testimate ratio\tdispatch lag p99\tcalls")
	for _, r := range rs {
		if r.Failed() {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%d\n", r.Deployment, r.Evidence.Calls)
			continue
		}
		released := "no"
		if r.Released {
			released = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.1f ms\t%d\n", r.Deployment, released, r.Recommendation, r.EstimateRatio, r.DispatchLagMSP99, r.Evidence.Calls)
	}
	tw.Flush()
	fmt.Fprintln(b)
	for _, r := range rs {
		if r.Failed() {
			wrap(b, r.Deployment+": not calibrated: ", r.Error)
		} else {
			wrap(b, r.Deployment+": ", r.Evidence.Summary+".")
		}
		if r.Image != nil {
			wrap(b, r.Deployment+": ", r.Image.summary(r.Deployment))
		}
	}
	if a := advice(rs, cfg); a != "" {
		fmt.Fprintln(b)
		wrap(b, "", a)
	}
	return b.Flush()
}

// Advice says what the results mean for the config's refund policy and
// margin; "" when nothing was calibrated.
func Advice(rs []Result, cfg Config) string {
	return strings.ReplaceAll(advice(rs, cfg), keep, " ")
}

// advice is Advice with its settings marked for wrap.
func advice(rs []Result, cfg Config) string {
	name := cmp.Or(cfg.Name, "the config")
	recs := map[string][]string{}
	var over []string
	for _, r := range rs {
		if r.Failed() {
			continue
		}
		recs[r.Recommendation] = append(recs[r.Recommendation], r.Deployment)
		if cfg.Margin > 0 && cfg.Margin*r.EstimateRatio > 1 {
			over = append(over, fmt.Sprintf("%s charges %.3f× headroom's estimate, so a margin of %.2f lets the fleet be charged past its limit: set %s", r.Deployment, r.EstimateRatio, cfg.Margin, setting("margin", fmt.Sprintf("%.2f", math.Floor(100/r.EstimateRatio)/100))))
		}
	}
	if len(recs) == 0 {
		return ""
	}
	var parts []string
	switch {
	case len(recs) > 1:
		parts = append(parts, fmt.Sprintf("the deployments differ (%s hold, %s give back): refund is one setting for the whole config, and only hold is safe while any deployment holds", strings.Join(recs[Hold], ", "), strings.Join(recs[Refund], ", ")))
		if cfg.Refund != budget.Hold {
			parts[0] += ": set " + setting("refund", budget.Hold)
		}
	case string(cfg.Refund) == only(recs):
		parts = append(parts, fmt.Sprintf("%s in %s matches what the deployments do", setting("refund", cfg.Refund), name))
	default:
		parts = append(parts, fmt.Sprintf("%s has %s, and the deployments %s: set %s", name, setting("refund", cfg.Refund), does(only(recs)), setting("refund", only(recs))))
	}
	return strings.Join(append(parts, over...), "; ") + "."
}

// setting writes name: value so that wrap keeps it on one line.
func setting(name string, value any) string {
	return fmt.Sprintf("%s:%s%v", name, keep, value)
}

// only is the one recommendation of recs.
func only(recs map[string][]string) string {
	for k := range recs {
		return k
	}
	return ""
}

func does(rec string) string {
	if rec == Refund {
		return "give back what a call leaves unused"
	}
	return "hold the unused estimate for the window"
}

// keep joins words that wrap must not part, such as a setting and its
// value.
const keep = "\x00"

// wrap writes s after prefix, wrapped at width, continuation lines
// indented by two.
func wrap(w io.Writer, prefix, s string) {
	line, empty := prefix, prefix == ""
	for _, word := range strings.Fields(s) {
		word = strings.ReplaceAll(word, keep, " ")
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = "  ", true
		}
		if !empty && !strings.HasSuffix(line, " ") {
			line += " "
		}
		line, empty = line+word, false
	}
	fmt.Fprintln(w, line)
}
