package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// runCall runs one call of a type and prints its record: how a user tries
// a new type before an agent uses it.
func runCall(fs *pflag.FlagSet) runner {
	input := fs.String("input", "", "JSON `file` with the call's input (- for standard input)")
	configFile := fs.String("config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	record := fs.String("record-calls", "", "append the exchanges to this cassette `file`")
	replay := fs.String("cassette", "", "answer from this cassette `file`, with no network")
	retry := fs.Bool("retry-truncated", false, "ask once more with twice the cap when an answer is cut at it, instead of failing")
	timeout := fs.Duration("timeout", llm.DefaultTimeout, "how long the call may take, waiting for budget and reading the answer included")
	renamed(fs, "record", "record-calls")
	renamed(fs, "replay", "cassette")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *input == "" {
			fprintf(stderr, "headroom call: want --input FILE, the call's input as JSON (- for standard input)\n")
			return exitUsage
		}
		if *timeout <= 0 {
			fprintf(stderr, "headroom call: --timeout %v: give a positive duration, such as 30s\n", *timeout)
			return exitUsage
		}
		if *record != "" && *replay != "" && safefile.Same(*record, *replay) {
			fprintf(stderr, "headroom call: --record-calls %s is the --cassette being replayed: recording again writes a copy, so name another file\n", *record)
			return exitUsage
		}
		// The input is read first (a device, a pipe or a file too large is
		// refused before anything starts) and decoded once the type is known.
		var raw []byte
		var err error
		if *input == "-" {
			raw, err = safefile.ReadAll(ctx, os.Stdin, maxInput, "standard input")
		} else {
			raw, err = safefile.ReadFile(*input, maxInput, "a JSON file")
		}
		if err != nil {
			if ctx.Err() == nil {
				err = agent.Usage(err)
			}
			fprintf(stderr, "headroom call: --input: %v\n", err)
			return agent.ExitCode(ctx, "", err)
		}
		typeName := args[0]
		types := calltypes.Default()
		o := llm.Options{Types: types, Record: *record, Replay: *replay}
		if *retry {
			o.Truncation = llm.RetryTruncated
		}
		caller, code := openCaller(ctx, *configFile, o, stderr)
		if caller == nil {
			return code
		}
		defer func() {
			// What the store could not be sent (a settle Redis never got)
			// is said, not dropped.
			if err := caller.Close(); err != nil {
				fprintf(stderr, "headroom call: closing the caller: %v\n", err)
			}
		}()
		if _, ok := types.Lookup(typeName); !ok { // the config's own types are there now
			var names []string
			for _, t := range types.Types() {
				names = append(names, t.Name)
			}
			fprintf(stderr, "headroom call: unknown call type %q (have %v)\n", typeName, names)
			return exitUsage
		}
		in, err := decodeInput(raw)
		if err != nil {
			return failed(ctx, stderr, "call", agent.Usage(fmt.Errorf("%s: %w", *input, err)))
		}

		cctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		out, rep, err := caller.Call(cctx, typeName, in, llm.CallOptions{})
		if err != nil {
			// An input the type refuses is bad usage (nothing was spent);
			// a call shed, or a store gone, the budget's.
			return failed(ctx, stderr, "call", err)
		}
		return printJSON(stdout, struct {
			llm.Report
			Output json.RawMessage `json:"output"`
		}{rep, out})
	}
}

// maxInput bounds a call's input: a page view and a goal are kilobytes.
const maxInput = 16 << 20

// decodeInput reads a call's input: one JSON value, nothing after it,
// written again as encoding/json writes a value (an object's keys
// sorted, numbers as they were).
func decodeInput(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("not JSON at byte %d: %v", se.Offset, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("not JSON: it ends at byte %d before the value does", len(raw))
		}
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value: give one object")
	}
	return json.Marshal(v)
}

// completeCallTypes offers the call types' names, the --config file's
// own among them.
func completeCallTypes(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	types := calltypes.Default()
	flag := ""
	if f := cmd.Flags().Lookup("config"); f != nil {
		flag = f.Value.String()
	}
	// A shell completing a word shows no warnings and no errors: the
	// command itself will.
	if f, _, _, err := config.Read(flag); err == nil && f != nil {
		_ = f.Apply(types)
	}
	var names []string
	for _, t := range types.Types() {
		names = append(names, t.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
