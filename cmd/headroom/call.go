package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
)

// runCall runs one call of a type and prints its record: how a user tries
// a new type before an agent uses it.
func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("call", "TYPE", stderr)
	input := fs.String("input", "", "JSON `file` with the call's input (- for standard input)")
	configFile := fs.String("config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	record := fs.String("record", "", "append the exchanges to this cassette `file`")
	replay := fs.String("replay", "", "answer from this cassette `file`, with no network")
	retry := fs.Bool("retry-truncated", false, "ask once more with twice the cap when an answer is cut at it, instead of failing")
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		// TYPE first, flags after, as the usage line shows.
		args = append(args[1:], args[0])
	}
	if code, done := parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 || *input == "" {
		fprintf(stderr, "headroom call: want one TYPE and --input FILE\n")
		fs.Usage()
		return exitUsage
	}
	if *record != "" && *replay != "" {
		fprintf(stderr, "headroom call: --record and --replay do not go together\n")
		return exitUsage
	}
	typeName := fs.Arg(0)
	types := calltypes.Default()
	if _, ok := types.Lookup(typeName); !ok {
		var names []string
		for _, t := range types.Types() {
			names = append(names, t.Name)
		}
		fprintf(stderr, "headroom call: unknown call type %q (have %v)\n", typeName, names)
		return exitUsage
	}
	var raw []byte
	var err error
	if *input == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*input)
	}
	if err != nil {
		fprintf(stderr, "headroom call: --input: %v\n", err)
		return exitUsage
	}
	var in any
	if err := decodeInput(raw, &in); err != nil {
		fprintf(stderr, "headroom call: %s: %v\n", *input, err)
		return exitUsage
	}

	caller := &llm.Caller{Types: types}
	if *retry {
		caller.Truncation = llm.RetryTruncated
	}
	cfg, code := loadConfig(*configFile, types, stderr)
	if code != exitOK {
		return code
	}
	switch {
	case *replay != "":
		f, err := os.Open(*replay)
		if err != nil {
			fprintf(stderr, "headroom call: --replay: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if caller.Cassette, err = llm.LoadCassette(f, *replay); err != nil {
			fprintf(stderr, "headroom call: %v\n", err)
			return exitUsage
		}
	default:
		b, code := openBudget(ctx, cfg, stderr)
		if b == nil {
			return code
		}
		defer b.Close()
		caller.Dispatcher = b.Dispatcher
		if *record != "" {
			f, err := os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				fprintf(stderr, "headroom call: --record: %v\n", err)
				return exitUsage
			}
			defer f.Close()
			caller.Cassette = llm.NewRecorder(f, b.Dispatcher.Secrets()...)
		}
	}
	rec, err := caller.Call(ctx, typeName, in, llm.CallOptions{})
	if err != nil {
		fprintf(stderr, "headroom call: %v\n", err)
		if errors.Is(err, budget.ErrShed) || errors.Is(err, budget.ErrTooLarge) {
			return exitBudget
		}
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitFailed
	}
	return printJSON(stdout, rec)
}

// loadConfig reads the config file (or $HEADROOM_CONFIG), prints its
// warnings and applies its call-type overrides to types. No file is no
// config: the embedded default. On failure it has reported the error.
func loadConfig(file string, types *calltypes.Registry, stderr io.Writer) (*budget.Config, int) {
	if file == "" {
		file = os.Getenv("HEADROOM_CONFIG")
	}
	if file == "" {
		return nil, exitOK
	}
	cfg, warnings, err := budget.LoadConfig(file)
	if err != nil {
		fprintf(stderr, "headroom: %v\n", err)
		return nil, exitUsage
	}
	for _, w := range warnings {
		fprintf(stderr, "headroom: warning: %s\n", w)
	}
	if err := llm.ApplyOverrides(cfg, types); err != nil {
		fprintf(stderr, "headroom: %v\n", err)
		return nil, exitUsage
	}
	return cfg, exitOK
}

// openBudget opens cfg's budget, or the embedded default when cfg is nil.
// On failure it has reported the error and returns the exit code.
func openBudget(ctx context.Context, cfg *budget.Config, stderr io.Writer) (*llm.Budget, int) {
	if cfg == nil {
		b, err := llm.OpenEmbedded(ctx)
		if err != nil {
			fprintf(stderr, "headroom: the embedded simulator: %v\n", err)
			return nil, exitFailed
		}
		return b, exitOK
	}
	b, err := llm.OpenBudget(ctx, cfg, llm.DispatcherOptions{})
	if err != nil {
		fprintf(stderr, "headroom: %v\n", err)
		return nil, exitUsage
	}
	return b, exitOK
}

// decodeInput reads a call's input: one JSON value, nothing after it.
func decodeInput(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("not JSON at byte %d: %v", se.Offset, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("not JSON: it ends at byte %d before the value does", len(raw))
		}
		return fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value: give one object")
	}
	return nil
}
