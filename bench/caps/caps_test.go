package caps

import (
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// The rows are the agent mix's, with the shipped caps, and the caps pay.
func TestMeasure(t *testing.T) {
	c, err := embedded.Open(t.Context(), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, factor, err := Measure(t.Context(), c.Dispatcher, 4096)
	if err != nil {
		t.Fatal(err)
	}
	mix := calltypes.AgentMix()
	if len(rows) != len(mix) {
		t.Fatalf("%d rows for a mix of %d types", len(rows), len(mix))
	}
	for i, r := range rows {
		typ, _ := calltypes.Default().Lookup(mix[i].Type)
		if r.Type != mix[i].Type || r.Weight != mix[i].Calls || r.MaxTokens != typ.MaxTokens {
			t.Errorf("row %+v, want type %s, weight %d, cap %d", r, mix[i].Type, mix[i].Calls, typ.MaxTokens)
		}
		if r.Charged <= r.MaxTokens || r.FlatCharged-r.Charged != 4096-r.MaxTokens || r.Used <= 0 {
			t.Errorf("row %+v: charged with the cap, flat, used", r)
		}
	}
	if factor <= 1 {
		t.Errorf("throughput factor %.2f", factor)
	}
}
