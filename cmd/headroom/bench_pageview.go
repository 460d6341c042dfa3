package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/bench/pageview"
)

// benchPageview renders every page of the test sites and prices every
// step of every task both ways: the JSON page prompts carried before, and
// each call type's view.
func benchPageview(fs *pflag.FlagSet) runner {
	pages := fs.String("pages", "testdata/pages", "the `directory` of the sites' recordings and steps files")
	tasks := fs.String("tasks", "testdata/tasks", "the `directory` of task files with their recordings")
	asJSON := fs.Bool("json", false, "print the rows and totals as JSON")
	var bf browserFlags
	bf.addBrowser(fs)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
		if _, err := bf.load(); err != nil {
			return failed(ctx, stderr, "bench pageview", agent.Usage(err))
		}
		o := pageview.Options{Pages: *pages, Tasks: *tasks, Browser: bf.options(stderr),
			Progress: func(format string, args ...any) { fprintf(stderr, "headroom bench pageview: "+format+"\n", args...) }}
		r, err := pageview.Measure(ctx, o)
		if err != nil {
			return failed(ctx, stderr, "bench pageview", err)
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"pages": r.Pages, "vision": r.Vision, "steps": r.Steps, "tasks": r.Tasks, "today": r.Today, "view": r.View, "ratio": r.Ratio()})
		}
		writePageviewTables(stdout, r)
		return exitOK
	}
}

func writePageviewTables(w io.Writer, r pageview.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\ttype\telements today\tview\tof\ttext today\tview\tof\tchars today\tview\testimate today\tview\to200k today\tview\t")
	for _, p := range r.Pages {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Page, p.Type,
			p.Today.Elements, p.View.Elements, p.ElementsAll, p.Today.TextChars, p.View.TextChars, p.TextAll,
			p.Today.Chars, p.View.Chars, p.Today.Estimate, p.View.Estimate, p.Today.Tokens, p.View.Tokens)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tstatus\tsteps\treserved by steps today\tview\tview/today\tlargest step today\tview\tplan today\tview\tanswer today\tview\t")
	for _, t := range r.Tasks {
		var big [2]int64
		for _, s := range r.Steps {
			if s.Task == t.Task {
				big = [2]int64{max(big[0], s.Today), max(big[1], s.View)}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t\n", t.Task, t.Status, t.Steps, t.Today, t.View, ratio(t.View, t.Today),
			big[0], big[1], t.Plan[0], t.Plan[1], t.Answer[0], t.Answer[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\tpick's text view\tpick step\tlow image\tstep + low\thigh image\tstep + high\tlow px\thigh px\thigh bytes\tmasked\thigh on 4.1-mini\to4-mini\t")
	for _, v := range r.Vision {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%dx%d\t%dx%d\t%d\t%d\t%d\t%d\t\n", v.Page, v.TextView, v.Step,
			v.Low.Tokens, v.Step+v.Low.Tokens, v.High.Tokens, v.Step+v.High.Tokens, v.Low.Width, v.Low.Height, v.High.Width, v.High.Height,
			v.High.Bytes, v.High.Masked, v.Mini, v.O4Mini)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nevery step of every task: %d tokens reserved with the JSON page, %d with the views: %.1f%%\n", r.Today, r.View, 100*r.Ratio())
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
