package main

import (
	"cmp"
	"context"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/calltypes"
)

// runCalltypes lists the call types and the caps they are charged at.
func runCalltypes(fs *pflag.FlagSet) runner {
	asJSON := fs.Bool("json", false, "print a JSON array instead of a table")
	configFile := fs.String("config", "", "config `file` whose call types to list too, as changed or defined there (default $HEADROOM_CONFIG)")
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		types := calltypes.Default()
		builtin := map[string]bool{}
		for _, t := range types.Types() {
			builtin[t.Name] = true
		}
		fallback := ""
		f, err := readConfig("calltypes", *configFile, stderr)
		if err == nil && f != nil {
			err = f.Apply(types)
		}
		if err != nil {
			fprintf(stderr, "headroom calltypes: %v\n", err)
			return exitUsage
		}
		if f != nil && f.Fallback != nil {
			fallback = f.Fallback.Pool
		}
		type row struct {
			Name            string             `json:"name"`
			MaxTokens       int64              `json:"max_tokens"`
			N               int64              `json:"n"`
			Priority        calltypes.Priority `json:"priority"`
			ReasoningEffort string             `json:"reasoning_effort,omitempty"`
			Fallback        string             `json:"fallback,omitempty"` // the pool that serves what the default cannot
			View            calltypes.View     `json:"view"`               // what its calls read of the page
			PageTokens      int                `json:"page_tokens"`        // the page's cap
			Source          string             `json:"source"`             // built-in or config
		}
		rows := []row{} // an empty registry prints [], not null
		for _, t := range types.Types() {
			src := "config"
			if builtin[t.Name] {
				src = "built-in"
			}
			rows = append(rows, row{t.Name, t.MaxTokens, t.N, t.Priority, t.ReasoningEffort, cmp.Or(t.Fallback, fallback), t.View, t.PageTokens, src})
		}
		if *asJSON {
			return printJSON(stdout, rows)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fprintf(tw, "NAME\tMAX_TOKENS\tN\tPRIORITY\tREASONING\tFALLBACK\tVIEW\tPAGE_TOKENS\tFROM\n")
		for _, r := range rows {
			fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Name, r.MaxTokens, r.N, r.Priority, cmp.Or(r.ReasoningEffort, "-"), cmp.Or(r.Fallback, "-"), r.View, r.PageTokens, r.Source)
		}
		if err := tw.Flush(); err != nil {
			return exitFailed
		}
		return exitOK
	}
}
