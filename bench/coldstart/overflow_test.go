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
		{Deployment: "a", Refusals: []azuresim.Refusal{{At: at(2_000), Window: time.Second, Limit: 2, Held: []time.Time{at(1_100), at(1_900)}, CountLagMax: 640 * time.Millisecond}}},
		{Deployment: "b"},
	}}
	calls := []sent{
		{"a", at(900), at(1_050), time.Time{}},   // admitted before the window, sent in it
		{"a", at(1_850), at(1_860), time.Time{}}, // both in it
		{"a", at(2_100), at(2_110), time.Time{}}, // after the refusal
		{"b", at(1_500), at(1_510), time.Time{}}, // another deployment
		{"a", time.Time{}, time.Time{}, time.Time{}},
	}
	got := overflows(snap, calls, t0)
	want := Overflow{Deployment: "a", WindowMS: 1_000, Limit: 2, AtMS: 2_000, HeldSpanMS: 900, Admitted: 1, Sent: 2, MaxLagMS: 150, ServerLagMS: 640}
	if len(got) != 1 || got[0] != want {
		t.Errorf("overflows %+v, want [%+v]", got, want)
	}
}

// TestSendLagsAndOverruns: the lags are read from admission to sending,
// and only a request that left after its send-by is an overrun.
func TestSendLagsAndOverruns(t *testing.T) {
	t0 := time.Unix(1_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	calls := []sent{
		{"a", at(0), at(40), at(100)},      // in time
		{"a", at(0), at(130), at(100)},     // 30 ms past its send-by
		{"b", at(0), at(300), time.Time{}}, // no send-by: no overrun
		{"b", at(0), time.Time{}, at(50)},  // never sent
	}
	if p99, longest := sendLags(calls); p99 != 300 || longest != 300 {
		t.Errorf("send lags p99 %d, longest %d; want 300, 300", p99, longest)
	}
	if n, longest := pastSendBy(calls); n != 1 || longest != 30 {
		t.Errorf("past send-by %d, longest %d ms; want 1, 30", n, longest)
	}
}
