package main

import (
	"context"
	"io"
	"text/tabwriter"

	"github.com/headroom-agent/headroom/calltypes"
)

// runCalltypes lists the call types and the caps they are charged at.
func runCalltypes(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("calltypes", "", stderr)
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	if code, done := parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fprintf(stderr, "headroom calltypes: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	type row struct {
		Name      string             `json:"name"`
		MaxTokens int64              `json:"max_tokens"`
		N         int64              `json:"n"`
		Priority  calltypes.Priority `json:"priority"`
	}
	rows := []row{} // an empty registry prints [], not null
	for _, t := range calltypes.Default().Types() {
		rows = append(rows, row{t.Name, t.MaxTokens, t.N, t.Priority})
	}
	if *asJSON {
		return printJSON(stdout, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fprintf(tw, "NAME\tMAX_TOKENS\tN\tPRIORITY\n")
	for _, r := range rows {
		fprintf(tw, "%s\t%d\t%d\t%s\n", r.Name, r.MaxTokens, r.N, r.Priority)
	}
	if err := tw.Flush(); err != nil {
		return exitFailed
	}
	return exitOK
}
