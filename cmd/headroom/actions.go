package main

import (
	"context"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/calltypes"
)

// runActions lists the actions a model may pick, as click-pick tells it.
func runActions(fs *pflag.FlagSet) runner {
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	return func(_ context.Context, _ []string, stdout, _ io.Writer) int {
		type row struct {
			Name     string `json:"name"`
			Element  string `json:"element"`           // never, optional or required
			Text     string `json:"text"`              // likewise
			TextIs   string `json:"text_is,omitempty"` // what the text is
			Describe string `json:"describe"`          // what the model is told after the name
			Told     string `json:"told"`              // where: in every click-pick's list, or where it applies
		}
		need := map[calltypes.Need]string{calltypes.Never: "never", calltypes.Optional: "optional", calltypes.Required: "required"}
		var rows []row
		for _, s := range calltypes.Actions() {
			told := "every pick"
			if s.Where != "" {
				told = s.Where
			}
			rows = append(rows, row{s.Name, need[s.Element], need[s.Text], s.TextIs, s.Describe, told})
		}
		if *asJSON {
			return printJSON(stdout, rows)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fprintf(tw, "NAME\tELEMENT\tTEXT\tTOLD IN\tTHE MODEL IS TOLD\n")
		for _, r := range rows {
			fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\n", r.Name, r.Element, r.Text, r.Told, r.Name, r.Describe)
		}
		if err := tw.Flush(); err != nil {
			return exitFailed
		}
		return exitOK
	}
}
