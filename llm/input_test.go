package llm

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
)

// An input the type does not take is refused before any request: the
// simulator sees nothing and nothing is reserved.
func TestCallRefusesInputsItsTypeDoesNotTake(t *testing.T) {
	sc := newSimCaller(t, "", nil)
	for _, c := range []struct {
		name, typ, in, field string
	}{
		{"an array", "planning", `[]`, ""},
		{"null", "summarize", `null`, ""},
		{"no goal", "planning", `{"page":{"url":"https://x.example/","title":"x"}}`, "goal"},
		{"an empty goal", "click-pick", `{"goal":""}`, "goal"},
		{"no question", "yes-no", `{"goal":"g"}`, "question"},
		{"an unknown field", "summarize", `{"goal":"g","gaol":"typo"}`, "gaol"},
		{"a field of the wrong type", "planning", `{"goal":"g","page":"https://x.example/"}`, "page"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, rep, err := sc.Call(context.Background(), c.typ, json.RawMessage(c.in), CallOptions{})
			var ie *calltypes.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v, want an *InputError", err)
			}
			if ie.Field != c.field || ie.Type != c.typ {
				t.Errorf("err %+v names field %q of %q, want %q of %q", err, ie.Field, ie.Type, c.field, c.typ)
			}
			if rep.TokensReserved != 0 || rep.Deployment != "" {
				t.Errorf("a refused input reserved or sent: %+v", rep)
			}
			t.Log(err)
		})
	}
	sc.mu.Lock()
	n := len(sc.bodies)
	sc.mu.Unlock()
	if n != 0 {
		t.Errorf("the simulator saw %d requests for inputs refused", n)
	}
	if st := sc.Stats()["planning"]; st.Calls != 0 {
		t.Errorf("refused inputs counted as calls: %+v", st)
	}
	// Every built-in still takes its own input.
	for typ, in := range inputs {
		if _, _, err := sc.Call(context.Background(), typ, asJSON(in), CallOptions{}); err != nil {
			var ie *calltypes.InputError
			if errors.As(err, &ie) {
				t.Errorf("%s refused its own input: %v", typ, err)
			}
		}
	}
}
