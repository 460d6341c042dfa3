package llm

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// scripted answers every request with the next of its replies, the last
// one again once they run out.
type scripted struct {
	mu      sync.Mutex
	replies []string
	n       int
}

func (s *scripted) Reply(azuresim.Request) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replies[min(s.n, len(s.replies)-1)]
	s.n++
	return r
}

// looseClick is the answer a model gave in the wild: a click with
// submit set, which only type uses.
const looseClick = `{"action":"click","index":0,"text":"","submit":true,"reason":"the first result matches"}`

func scriptedCaller(t *testing.T, replies ...string) *simCaller {
	t.Helper()
	return newSimCaller(t, "scripted", map[string]azuresim.Model{"scripted": &scripted{replies: replies}})
}

func TestALooseAnswerIsMendedWithNoRepairRequest(t *testing.T) {
	sc := scriptedCaller(t, looseClick)
	in := inputs[calltypes.ClickPick].(calltypes.PickInput)
	got, rep, err := Call(context.Background(), sc.Caller, calltypes.PickCall, in, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := calltypes.Action{Kind: calltypes.ActClick, Index: 0, Reason: "the first result matches"}
	if got != want {
		t.Errorf("answer %#v, want %#v", got, want)
	}
	if len(sc.bodies) != 1 || rep.Retries != 0 || rep.Repaired || !reflect.DeepEqual(rep.Mends, []string{"submit dropped from click"}) {
		t.Errorf("%d requests, report %+v; want one request and the mend", len(sc.bodies), rep)
	}
	if st := sc.Stats()[calltypes.ClickPick]; st.Calls != 1 || st.Mended != 1 || st.Repaired != 0 || st.Invalid != 0 {
		t.Errorf("stats %+v, want one call, mended", st)
	}

	// By name, the answer is the mended value's JSON, not the model's text.
	out, rep, err := sc.Call(context.Background(), calltypes.ClickPick, asJSON(in), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"action":"click","index":0,"text":"","submit":false,"reason":"the first result matches"}`; string(out) != w || len(rep.Mends) != 1 {
		t.Errorf("output %s (report %+v), want %s", out, rep, w)
	}
	if st := sc.Stats()[calltypes.ClickPick]; st.Mended != 2 || len(sc.bodies) != 2 {
		t.Errorf("stats %+v after %d requests, want two mended in two", st, len(sc.bodies))
	}
}

// An answer the repair request brings back with a slip is mended too,
// and counted as repaired: a request was sent for it.
func TestARepairedAnswerIsMendedToo(t *testing.T) {
	sc := scriptedCaller(t, `{"action":"click"`, looseClick)
	got, rep, err := Call(context.Background(), sc.Caller, calltypes.PickCall, inputs[calltypes.ClickPick].(calltypes.PickInput), CallOptions{})
	if err != nil || got.Submit || got.Index != 0 {
		t.Fatalf("%#v, %v", got, err)
	}
	if len(sc.bodies) != 2 || rep.Retries != 1 || !rep.Repaired || len(rep.Mends) != 1 {
		t.Errorf("%d requests, report %+v; want the repair, and the mend", len(sc.bodies), rep)
	}
	if st := sc.Stats()[calltypes.ClickPick]; st.Mended != 0 || st.Repaired != 1 {
		t.Errorf("stats %+v, want repaired, not mended", st)
	}
}

// What cannot be mended gets the repair request, which says what is
// still wrong once the slips are fixed, and fails as before.
func TestWhatCannotBeMendedIsRepairedOrRefused(t *testing.T) {
	// The parser stops at the index written as a string, which can be
	// mended; the reason's length cannot.
	unfit := `{"action":"click","index":"3","text":"","submit":false,"reason":"` + strings.Repeat("a", 201) + `"}`
	sc := scriptedCaller(t, unfit)
	_, rep, err := sc.Call(context.Background(), calltypes.ClickPick, asJSON(inputs[calltypes.ClickPick]), CallOptions{})
	var inv *InvalidOutputError
	if !errors.As(err, &inv) || len(sc.bodies) != 2 || rep.Mends != nil || rep.Repaired || !rep.Invalid {
		t.Fatalf("%v after %d requests, report %+v", err, len(sc.bodies), rep)
	}
	msgs := sc.bodies[1]["messages"].([]any)
	if problem := msgs[len(msgs)-1].(map[string]any)["content"].(string); !strings.Contains(problem, "reason has 201 characters") || strings.Contains(problem, "index") {
		t.Errorf("the repair request says %q", problem)
	}
	if st := sc.Stats()[calltypes.ClickPick]; st.Mended != 0 || st.Repaired != 0 || st.Invalid != 1 {
		t.Errorf("stats %+v", st)
	}

}

type countOnly struct {
	N int `json:"n"`
}

// countType is a user's type whose answer holds an integer; mend gives it
// JSONMender's Mend.
func countType(mend bool) calltypes.Type {
	t := calltypes.Type{
		Name: "count", MaxTokens: 16, System: "Count the items.",
		Schema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"}},
		Parse:  calltypes.JSONParser[countOnly](nil),
	}
	if mend {
		t.Mend = calltypes.JSONMender[countOnly](nil, nil)
	}
	return t
}

// A type of the user's own mends only when it says how: without a Mend,
// its parser's refusal gets the repair request as before.
func TestAUserTypeMendsOnlyWithAMend(t *testing.T) {
	for _, mend := range []bool{false, true} {
		sc := scriptedCaller(t, `{"n":"3"}`, `{"n":3}`)
		if err := sc.Types.Register(countType(mend)); err != nil {
			t.Fatal(err)
		}
		out, rep, err := sc.Call(context.Background(), "count", asJSON(goalOnly{Goal: "g"}), CallOptions{})
		st := sc.Stats()["count"]
		switch {
		case err != nil || string(out) != `{"n":3}`:
			t.Errorf("mend %v: %s, %v", mend, out, err)
		case !mend && (len(sc.bodies) != 2 || st.Repaired != 1 || st.Mended != 0 || rep.Mends != nil):
			t.Errorf("no Mend: %d requests, stats %+v, report %+v; want a repair", len(sc.bodies), st, rep)
		case mend && (len(sc.bodies) != 1 || st.Repaired != 0 || st.Mended != 1 || !reflect.DeepEqual(rep.Mends, []string{`n "3" read as 3`})):
			t.Errorf("a Mend: %d requests, stats %+v, report %+v; want it mended", len(sc.bodies), st, rep)
		}
	}
}

// A cassette holds the model's text; replaying it mends it again, to the
// same answer and report.
func TestAReplayedLooseAnswerIsMendedAgain(t *testing.T) {
	sc := scriptedCaller(t, looseClick)
	var tape bytes.Buffer
	sc.Cassette = NewCassette(&tape, sc.Dispatcher.Secrets()...)
	in := asJSON(inputs[calltypes.ClickPick])
	out, rep, err := sc.Call(context.Background(), calltypes.ClickPick, in, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tape.String(), `\"submit\":true`) || strings.Contains(tape.String(), "mends") {
		t.Errorf("the cassette should hold the model's own text and no mends:\n%s", tape.String())
	}
	cas, err := LoadCassette(bytes.NewReader(tape.Bytes()), "calls.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	out2, rep2, err := replayer.Call(context.Background(), calltypes.ClickPick, in, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, rep2 = rep.timeless(), rep2.timeless()
	if !bytes.Equal(out, out2) || !reflect.DeepEqual(rep, rep2) || replayer.Stats()[calltypes.ClickPick].Mended != 1 {
		t.Errorf("replayed %s %+v, recorded %s %+v", out2, rep2, out, rep)
	}
}
