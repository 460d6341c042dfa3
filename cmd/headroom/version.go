package main

import (
	"context"
	_ "embed"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"), as
// make build and the image do; without it the build info says.
var version = ""

// base is the version this source is on its way to (or is, when tagged):
// what a build that stamps nothing else reports.
//
//go:embed VERSION
var base string

func runVersion(*pflag.FlagSet) runner {
	return func(_ context.Context, _ []string, stdout, _ io.Writer) int {
		fprintf(stdout, "headroom %s %s\n", versionString(), runtime.Version())
		return exitOK
	}
}

// versionString is the link-time version, else the one the go command
// stamped: the module's version for go install, or for a build in a
// checkout a pseudo-version from its commit (+dirty with local changes);
// else VERSION with the commit, else VERSION alone (a build with
// -buildvcs=false).
func versionString() string {
	if version != "" {
		return version
	}
	base := strings.TrimSpace(base)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return base
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return base
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += ".dirty"
	}
	return base + "+" + rev
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (l *listFlag) String() string     { return "" }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }
func (l *listFlag) Type() string       { return "strings" }
