package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/budget"
)

// maxFlagDuration bounds every duration flag. Each is a timeout, a
// window, a delay or how long a bench runs, where a year is already
// nonsense; and a command scales some of them (twenty times a stall, a
// window and a second more), which must not overflow.
const maxFlagDuration = 365 * 24 * time.Hour

// boundDurations makes every duration flag of fs refuse a negative value
// or one over maxFlagDuration when it is parsed: a negative timeout or
// window would otherwise be read as the default, as none, or as an
// instant, with no word said. The error names the flag (pflag's
// "invalid argument ... for --flag"), and the command exits 2.
func boundDurations(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "duration" {
			f.Value = boundedDuration{Value: f.Value, def: f.DefValue}
		}
	})
}

// boundedDuration is a duration flag's value that refuses what no length
// of time can be.
type boundedDuration struct {
	pflag.Value
	def string // the flag's default, for the message
}

func (d boundedDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		// The flag's own parser says why.
	case v < 0:
		return fmt.Errorf("%s is negative: give a duration of 0 or more (the default is %s)", s, d.def)
	case v > maxFlagDuration:
		return fmt.Errorf("%s is over a year (8760h): give a shorter duration (the default is %s)", s, d.def)
	}
	return d.Value.Set(s)
}

// checkWindow refuses a rate-limit window a bench's store or simulator
// cannot keep: 0 is the flag's default; anything else is at least
// budget.MinWindow, so the 1 s request window is a millisecond or more.
func checkWindow(flag string, d time.Duration) error {
	if d != 0 && d < budget.MinWindow {
		return fmt.Errorf("%s %v is too short: use at least %v (the minute, compressed)", flag, d, budget.MinWindow)
	}
	return nil
}
