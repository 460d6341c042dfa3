package coldstart

import (
	"testing"
	"time"

	"github.com/headroom-agent/headroom/llm/azuresim"
)

// A refusal is read against the calls of its own deployment within its
// window's length: those admitted, those sent, and the longest lag.
func TestOverflowsReadTheLogAgainstTheReports(t *testing.T) {
	t0 := time.Unix(1_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	snap := azuresim.Snapshot{Deployments: []azuresim.Stats{
		{Deployment: "a", Refusals: []azuresim.Refusal{{At: at(2_000), Window: time.Second, Limit: 2, Held: []time.Time{at(1_100), at(1_900)}}}},
		{Deployment: "b"},
	}}
	calls := []sent{
		{"a", at(900), at(1_050)},   // admitted before the window, sent in it
		{"a", at(1_850), at(1_860)}, // both in it
		{"a", at(2_100), at(2_110)}, // after the refusal
		{"b", at(1_500), at(1_510)}, // another deployment
		{"a", time.Time{}, time.Time{}},
	}
	got := overflows(snap, calls, t0)
	want := Overflow{Deployment: "a", WindowMS: 1_000, Limit: 2, AtMS: 2_000, HeldSpanMS: 900, Admitted: 1, Sent: 2, MaxLagMS: 150}
	if len(got) != 1 || got[0] != want {
		t.Errorf("overflows %+v, want [%+v]", got, want)
	}
}
