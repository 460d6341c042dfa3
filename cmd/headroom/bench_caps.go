package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/bench/caps"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// benchCaps compares each built-in type's charge against the rate limit
// with its own cap and with a flat one, on the embedded simulator.
func benchCaps(fs *pflag.FlagSet) runner {
	flat := fs.Int64("flat-cap", 4096, "the flat max_tokens to compare the types' caps with")
	renamed(fs, "flat", "flat-cap")
	asJSON := fs.Bool("json", false, "print the rows and the factor as JSON")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *flat < 1 {
			fprintf(stderr, "headroom bench caps: --flat-cap %d: want a cap of at least 1 token\n", *flat)
			return exitUsage
		}
		caller, err := embedded.Open(ctx, llm.Options{})
		if err != nil {
			return failed(ctx, stderr, "bench caps", err)
		}
		defer caller.Close()
		rows, factor, err := caps.Measure(ctx, caller.Dispatcher, *flat)
		if err != nil {
			return failed(ctx, stderr, "bench caps", err)
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"flat": *flat, "rows": rows, "throughput_factor": factor})
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "type\tcalls in mix\tmax_tokens\tcharged/call\tcharged/call at %d\tused/call\twith a screenshot, low\thigh\tstable prefix\tof %d\t\n", *flat, caps.CacheMinimum)
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t\n", r.Type, r.Weight, r.MaxTokens, r.Charged, r.FlatCharged, r.Used,
				r.WithLow, r.WithHigh, r.StablePrefix, 100*float64(r.StablePrefix)/caps.CacheMinimum)
		}
		tw.Flush()
		fprintf(stdout, "throughput factor for the mix: %.2f× as many calls a minute with the types' caps as with max_tokens %d\n", factor, *flat)
		return exitOK
	}
}
