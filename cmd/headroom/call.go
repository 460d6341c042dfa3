package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// callFlags are call's flags, read when the command runs.
type callFlags struct {
	input, configFile string
	record, replay    string
	retry             bool
	timeout           time.Duration
}

// runCall runs one call of a type and prints its record: how a user tries
// a new type before an agent uses it.
func runCall(fs *pflag.FlagSet) runner {
	f := &callFlags{}
	fs.StringVar(&f.input, "input", "", "JSON `file` with the call's input (- for standard input)")
	fs.StringVar(&f.configFile, "config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	fs.StringVar(&f.record, "record-calls", "", "append the exchanges to this cassette `file`")
	fs.StringVar(&f.replay, "cassette", "", "answer from this cassette `file`, with no network")
	fs.BoolVar(&f.retry, "retry-truncated", false, "ask once more with twice the cap when an answer is cut at it, instead of failing")
	fs.DurationVar(&f.timeout, "timeout", llm.DefaultTimeout, "how long the call may take, waiting for budget and reading the answer included")
	renamed(fs, "record", "record-calls")
	renamed(fs, "replay", "cassette")
	return f.run
}

// run reads the input, opens the caller, makes the call and prints its
// record.
func (f *callFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if !f.check(stderr) {
		return exitUsage
	}
	// The input is read first (a device, a pipe or a file too large is
	// refused before anything starts) and decoded once the type is known.
	raw, err := f.readInput(ctx)
	if err != nil {
		fprintf(stderr, "headroom call: --input: %v\n", err)
		return agent.ExitCode(ctx, "", err)
	}
	typeName := args[0]
	types := calltypes.Default()
	o := llm.Options{Types: types, Record: f.record, Replay: f.replay}
	if f.retry {
		o.Truncation = llm.RetryTruncated
	}
	caller, code := openCaller(ctx, f.configFile, o, stderr)
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
		return failed(ctx, stderr, "call", agent.Usage(fmt.Errorf("%s: %w", f.input, err)))
	}

	cctx, cancel := context.WithTimeout(ctx, f.timeout)
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

// check says on stderr what is wrong with the flags, and returns false
// if something is.
func (f *callFlags) check(stderr io.Writer) bool {
	if f.input == "" {
		fprintf(stderr, "headroom call: want --input FILE, the call's input as JSON (- for standard input)\n")
		return false
	}
	if f.timeout <= 0 {
		fprintf(stderr, "headroom call: --timeout %v: give a positive duration, such as 30s\n", f.timeout)
		return false
	}
	if f.record != "" && f.replay != "" && safefile.Same(f.record, f.replay) {
		fprintf(stderr, "headroom call: --record-calls %s is the --cassette being replayed: recording again writes a copy, so name another file\n", f.record)
		return false
	}
	return true
}

// readInput reads --input, a file or standard input; an input that
// cannot be read is bad usage, unless the command was stopped.
func (f *callFlags) readInput(ctx context.Context) ([]byte, error) {
	var raw []byte
	var err error
	if f.input == "-" {
		raw, err = safefile.ReadAll(ctx, os.Stdin, maxInput, "standard input")
	} else {
		raw, err = safefile.ReadFile(f.input, maxInput, "a JSON file")
	}
	if err != nil && ctx.Err() == nil {
		err = agent.Usage(err)
	}
	return raw, err
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
