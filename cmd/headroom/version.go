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
	fprintf(stdout, "headroom %s %s\n", versionString(), runtime.Version())
	return exitOK
}

// versionString is the link-time version, else the module's, else (devel).
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
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

// parseMixed parses args whose positional arguments may stand before,
// between or after the flags (headroom record URL --out F); it returns
// the positional ones.
func parseMixed(fs *flag.FlagSet, args []string, stdout io.Writer) (pos []string, code int, done bool) {
	if code, done := parse(fs, args, stdout); done {
		return nil, code, true
	}
	for fs.NArg() > 0 {
		pos = append(pos, fs.Arg(0))
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return nil, exitUsage, true
		}
	}
	return pos, exitOK, false
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (l *listFlag) String() string     { return "" }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }
