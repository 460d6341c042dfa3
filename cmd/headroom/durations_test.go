package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every duration flag of every command refuses a negative value and one
// over a year before the command does any work, naming the flag, with
// the usage code.
func TestEveryDurationFlagRefusesNonsense(t *testing.T) {
	root := newRoot(new(bytes.Buffer), new(bytes.Buffer))
	seen := 0
	for _, c := range leaves(root) {
		p := path(c)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "duration" {
				return
			}
			seen++
			for value, want := range map[string]string{
				"-1s":    `invalid argument "-1s" for "--` + f.Name + `" flag: -1s is negative: give a duration of 0 or more`,
				"-1ns":   `for "--` + f.Name + `" flag: -1ns is negative`,
				"8761h":  `for "--` + f.Name + `" flag: 8761h is over a year (8760h)`,
				"1e400h": `for "--` + f.Name + `" flag: time: `,
			} {
				code, _, errs := runArgs(t, append(p, "--"+f.Name, value)...)
				if code != exitUsage || !strings.HasPrefix(errs, "headroom "+strings.Join(p, " ")+": ") || !strings.Contains(errs, want) {
					t.Errorf("headroom %s --%s %s: exit %d\n%s\nwant exit %d and %q", strings.Join(p, " "), f.Name, value, code, errs, exitUsage, want)
				}
			}
		})
	}
	// --load-timeout of run, observe and record, sim's four, the budget's
	// three, the benches' eleven, at least.
	if seen < 21 {
		t.Errorf("found %d duration flags", seen)
	}
}

// A bench's window and run time are refused when no store or simulator
// could keep them, before it starts anything.
func TestBenchWindowsAreRefusedWhenTooShort(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "store", "--duration", "0s"}, "headroom bench store: --duration 0s: each row needs some time to run"},
		{[]string{"bench", "store", "--window", "1ms"}, "headroom bench store: --window 1ms is too short: use at least 60ms"},
		{[]string{"bench", "fleet", "--window", "59ms"}, "headroom bench fleet: --window 59ms is too short: use at least 60ms"},
		{[]string{"bench", "agents", "--window", "1ns"}, "headroom bench agents: --window 1ns is too short: use at least 60ms"},
	} {
		code, _, errs := runArgs(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("headroom %v: exit %d\n%s\nwant %q", c.args, code, errs, c.want)
		}
	}
}
