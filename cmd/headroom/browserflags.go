package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/redact"
)

// browserFlags are the flags of every command that drives a browser.
type browserFlags struct {
	chrome  string
	remote  string
	allow   listFlag
	schemes listFlag
	redact  listFlag
	timeout time.Duration
	verbose bool
	// noSandbox turns Chrome's own sandbox off, for containers whose
	// seccomp profile forbids the user namespaces it is built on.
	noSandbox bool
	steps     string
}

func (b *browserFlags) add(fs *pflag.FlagSet) {
	b.addBrowser(fs)
	fs.StringVar(&b.steps, "steps", "", "YAML `file` of steps to take after the page loads (click, type, select, ...)")
}

// addBrowser adds the flags that choose and bound the browser, without
// --steps (a task file has its own).
func (b *browserFlags) addBrowser(fs *pflag.FlagSet) {
	fs.StringVar(&b.chrome, "chrome", "", "Chrome or Chromium `path` to launch (default $CHROME_PATH, then chromium, google-chrome, ... on $PATH)")
	fs.StringVar(&b.remote, "browser", "", "attach to a running browser at this DevTools `address` (ws://host:port/devtools/browser/ID or http://host:port) instead of launching one")
	fs.Var(&b.allow, "allow", "allow only this `domain` (and its subdomains) or IP address, in every tab, frame and worker; repeat for more; default: any (for run, the task's allowed domains, which --allow only narrows)")
	fs.Var(&b.schemes, "allow-scheme", "let navigations load this URL `scheme` too (file, data, chrome, ...); only http and https by default")
	fs.Var(&b.redact, "redact-name", "treat this header, query parameter or body field `name` as secret too, in HAR files, cassettes, logs and errors; repeat for more")
	fs.DurationVar(&b.timeout, "load-timeout", 30*time.Second, "give up on a page that has not loaded within this `duration`")
	fs.BoolVarP(&b.verbose, "verbose", "v", false, "log blocked requests and Chrome's own output to stderr")
	fs.BoolVar(&b.noSandbox, "no-sandbox", envTrue(envNoSandbox), "launch Chrome without its own sandbox, for a container that forbids the user namespaces it needs (the container is then the sandbox); default $"+envNoSandbox)
}

// load checks the flags and reads the steps file; an error is bad usage.
func (b *browserFlags) load() ([]browser.Step, error) {
	if err := checkDomains("--allow", b.allow); err != nil {
		return nil, err
	}
	for _, s := range b.schemes {
		if s == "" || strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789+-.") != "" {
			return nil, fmt.Errorf("--allow-scheme %q: want a URL scheme such as file or data, without a colon", s)
		}
	}
	for _, n := range b.redact {
		if redact.Normalize(n) == "" {
			return nil, fmt.Errorf("--redact-name %q: want a header, parameter or field name such as x-tenant-key", n)
		}
	}
	redact.Extend(b.redact...)
	if b.steps == "" {
		return nil, nil
	}
	return browser.LoadSteps(b.steps)
}

func (b *browserFlags) options(stderr io.Writer) browser.Options {
	o := browser.Options{ChromePath: b.chrome, Remote: b.remote, LoadTimeout: b.timeout, AllowSchemes: b.schemes}
	if b.noSandbox {
		o.Flags = map[string]any{"no-sandbox": true}
	}
	o.AllowedDomains = domains(b.allow)
	o.Logf = func(format string, args ...any) {
		if b.verbose {
			fprintf(stderr, "headroom: "+format+"\n", args...)
		}
	}
	// What a replay could not answer, or answered with a near match, is
	// always shown: it is why a replayed run goes differently.
	o.Warnf = func(format string, args ...any) {
		fprintf(stderr, "headroom: "+format+"\n", args...)
	}
	if b.verbose {
		o.ChromeOutput = stderr
	}
	return o
}

// domains splits a list flag's values at commas: --allow a.com,b.com is
// --allow a.com --allow b.com.
func domains(l listFlag) []string {
	var out []string
	for _, d := range l {
		for _, p := range strings.Split(d, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// checkDomains refuses a flag's domain that is not a host name or an IP
// address (browser.CheckDomain): a typo must never widen a run.
func checkDomains(flag string, l listFlag) error {
	for _, d := range domains(l) {
		if err := browser.CheckDomain(d); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	return nil
}

// envNoSandbox is --no-sandbox's default, set in the container image:
// Kubernetes' and ECS's default seccomp profiles refuse the user
// namespaces Chrome's sandbox needs, and Chrome will not start without.
const envNoSandbox = "HEADROOM_NO_SANDBOX"

// envTrue reads a yes/no environment variable: 1, true or yes is yes.
func envTrue(name string) bool {
	switch strings.ToLower(os.Getenv(name)) {
	case "1", "true", "yes":
		return true
	}
	return false
}
