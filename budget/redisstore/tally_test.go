package redisstore

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
)

// Two callers, two containers' worth, tell the fleet's census their
// totals as they close; a reader of the store (the exporter's view) sees
// their sum, by call type, by deployment and by run, after both are gone.
func TestCallersTellTheFleetTheirTotals(t *testing.T) {
	f := simFleet(t, "tally", "")
	ctx := context.Background()
	want := budget.Tally{}
	for i, calls := range []map[string]string{
		{"yes-no": `{"question": "Is the cart empty?", "goal": "empty the cart", "page": "url: https://shop.example/cart\ntitle: Cart\nYour cart is empty."}`},
		{"yes-no": `{"question": "Is a desk shown?", "goal": "find a desk", "page": "url: https://shop.example/desks\ntitle: Desks\nOak desk, 120 EUR"}`, "planning": `{"goal": "buy an oak desk", "page": "url: https://shop.example/\ntitle: Shop\n[0] link \"Desks\""}`},
	} {
		c, err := llm.Open(ctx, f, llm.Options{Types: calltypes.Default(), Dispatcher: llm.DispatcherOptions{Getenv: func(string) string { return "k" }}})
		if err != nil {
			t.Fatal(err)
		}
		for typ, in := range calls {
			if _, _, err := c.Call(ctx, typ, []byte(in), llm.CallOptions{Session: fmt.Sprint("agent-", i)}); err != nil {
				t.Fatal(err)
			}
		}
		c.CountRun("succeeded")
		if err := c.Close(); err != nil { // the last check-in tells what rose
			t.Fatal(err)
		}
		want.Add(c.Tally())
	}
	if want[budget.TallyKey{Counter: budget.TallyCalls, Type: "yes-no"}] != 2 || want[budget.TallyKey{Counter: budget.TallyRuns, Label: "succeeded"}] != 2 {
		t.Fatalf("the callers' own totals: %v", want)
	}

	store, err := budget.OpenStore(ctx, &f.Budget)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := budget.NewRouter(store, &f.Budget, budget.RouterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.FleetTally(ctx)
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("the fleet's totals: %v (%v)\nwant the callers' sum: %v", got, err, want)
	}
	v, err := metrics.Fleet(r)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Types) != 2 || v.Types[1].Name != "yes-no" || v.Types[1].Calls != 2 || v.Types[1].TokensUsed == 0 ||
		v.Runs["succeeded"] != 2 || v.Deployments[0].Answered != 3 {
		t.Errorf("the exporter's view: types %+v, runs %v, answered %d", v.Types, v.Runs, v.Deployments[0].Answered)
	}
}
