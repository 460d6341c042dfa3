package learn

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// On each changed site the model is asked from the first changed step,
// the run succeeds, the next run replays what it healed, and no run
// claims a success with another product in the cart.
func TestVariantsHealWithNoFalseSuccess(t *testing.T) {
	chrometest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	vs, err := MeasureVariants(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Logf("%s: learned %+v\n changed %+v\n healed %+v", v.Variant, v.Learned, v.Changed, v.Healed)
		if v.FalseSuccesses != 0 {
			t.Errorf("%s: %d false successes", v.Variant, v.FalseSuccesses)
		}
		if v.Learned.Status != string(agent.Succeeded) || v.Changed.Status != string(agent.Succeeded) || v.Healed.Status != string(agent.Succeeded) {
			t.Errorf("%s: %s, %s, %s; want three successes", v.Variant, v.Learned.Status, v.Changed.Status, v.Healed.Status)
		}
		if v.Healed.Calls != 0 {
			t.Errorf("%s: the run after healing made %d calls", v.Variant, v.Healed.Calls)
		}
	}
}

// A fleet that starts together asks the model once with learning on.
func TestFleetAsksOnce(t *testing.T) {
	chrometest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rows, err := MeasureFleet(ctx, FleetOptions{Agents: 4, Parallel: 4, Redis: redistest.URL(t),
		Options: Options{Pace: azuresim.Faults{Latency: 100 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	on, off := rows[0], rows[1]
	t.Logf("on %+v\noff %+v", on, off)
	if on.Succeeded != 4 || off.Succeeded != 4 {
		t.Fatalf("succeeded %d with learning, %d without; want 4 and 4", on.Succeeded, off.Succeeded)
	}
	if on.Asked != 1 || off.Asked != 4 || on.Tokens*2 > off.Tokens {
		t.Errorf("learning on: %d asked (%q), %d tokens; off: %d asked, %d tokens", on.Asked, on.Why, on.Tokens, off.Asked, off.Tokens)
	}
}
