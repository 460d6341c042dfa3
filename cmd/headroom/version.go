package main

import (
	"context"
	"flag"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); without
// it the module version from the build info is used.
var version = ""

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "", stderr)
	if code, done := parse(fs, args, stdout); done {
		return code
	}
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	fprintf(stdout, "headroom %s %s\n", v, runtime.Version())
	return exitOK
}

// newFlagSet makes a flag set whose errors go to stderr and whose usage
// line names the command.
func newFlagSet(name, argsUsage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("headroom "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fprintf(fs.Output(), "Usage: headroom %s [flags] %s\n\nFlags:\n", name, argsUsage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; done is true when the command should return code at
// once: -h (0, usage on stdout) or a bad flag or stray argument (2).
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK, true
		}
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage, true
	}
	return exitOK, false
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (l *listFlag) String() string     { return "" }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }
