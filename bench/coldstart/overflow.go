package coldstart

import (
	"cmp"
	"slices"
	"time"

	"github.com/headroom-agent/headroom/llm/azuresim"
)

// Overflow is one request-window 429 of the run, from the simulator's
// refusal log read beside the processes' reports: it tells a budget that
// admitted too many from calls admitted in time that reached the server
// bunched.
type Overflow struct {
	Deployment string `json:"deployment"`
	WindowMS   int64  `json:"window_ms"` // the request window that refused: 1 s or 10 s
	Limit      int64  `json:"limit"`
	// AtMS is when the server counted the refused call, from the run's
	// first count.
	AtMS int64 `json:"at_ms"`
	// HeldSpanMS is how far apart the calls the window held were
	// counted: from the first to the refused one.
	HeldSpanMS int64 `json:"held_span_ms"`
	// Admitted and Sent are the processes' last requests (the ones their
	// reports give) the budget admitted to the deployment, and that left
	// their process for it, within the window's length before the
	// refusal; MaxLagMS the longest time from admission to sending among
	// the sent ones. Admitted within the limit with the window over it
	// says the calls arrived bunched: lag the pacing did not allow for.
	Admitted int   `json:"admitted"`
	Sent     int   `json:"sent"`
	MaxLagMS int64 `json:"max_lag_ms"`
	// ServerLagMS is the simulator's own lateness in counting the refused
	// call or the calls its window held: past the pacing allowance, the
	// simulator bunched them, not the processes.
	ServerLagMS int64 `json:"server_lag_ms"`
}

// sent is one process's last request as its report gives it.
type sent struct {
	deployment       string
	admitted, wentAt time.Time
	by               time.Time // its send-by; zero without one
}

// overflows reads every refusal the simulator logged against what the
// processes reported, in the order the server counted them.
func overflows(snap azuresim.Snapshot, calls []sent, first time.Time) []Overflow {
	var out []Overflow
	for _, st := range snap.Deployments {
		for _, r := range st.Refusals {
			o := Overflow{Deployment: st.Deployment, WindowMS: r.Window.Milliseconds(), Limit: r.Limit, AtMS: r.At.Sub(first).Milliseconds(), ServerLagMS: r.CountLagMax.Milliseconds()}
			if len(r.Held) > 0 {
				o.HeldSpanMS = r.At.Sub(r.Held[0]).Milliseconds()
			}
			from := r.At.Add(-r.Window)
			for _, c := range calls {
				if c.deployment != st.Deployment {
					continue
				}
				if within(c.admitted, from, r.At) {
					o.Admitted++
				}
				if within(c.wentAt, from, r.At) {
					o.Sent++
					o.MaxLagMS = max(o.MaxLagMS, c.wentAt.Sub(c.admitted).Milliseconds())
				}
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Overflow) int { return cmp.Compare(a.AtMS, b.AtMS) })
	return out
}

// within reports whether t is in (from, to].
func within(t, from, to time.Time) bool { return !t.IsZero() && t.After(from) && !t.After(to) }
