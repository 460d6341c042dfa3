package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// simCaller is a Caller over a simulator whose request bodies the test
// can read.
type simCaller struct {
	*Caller
	sim    *azuresim.Sim
	mu     sync.Mutex
	bodies []map[string]any
}

func newSimCaller(t *testing.T, reply string, models map[string]azuresim.Model) *simCaller {
	t.Helper()
	return newModelCaller(t, azuresim.Deployment{Model: "gpt-4o", Reply: reply}, nil, models)
}

// newModelCaller is a simCaller over one simulated deployment d (named
// "d", 1M TPM), with the config file f changes applied.
func newModelCaller(t *testing.T, d azuresim.Deployment, change func(*config.File), models map[string]azuresim.Model) *simCaller {
	t.Helper()
	d.Name, d.TPM = "d", 6_000_000
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{d}}, azuresim.Options{Models: models})
	if err != nil {
		t.Fatal(err)
	}
	sc := &simCaller{sim: sim}
	h := sim.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(body, &m)
		sc.mu.Lock()
		sc.bodies = append(sc.bodies, m)
		sc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	f := &config.File{Budget: budget.Config{Deployments: []budget.Deployment{{Name: "d", Endpoint: ts.URL, Model: d.Model, TPM: 1_000_000, Auth: budget.Auth{APIKeyEnv: "K"}}}}}
	if change != nil {
		change(f)
	}
	c, err := Open(context.Background(), f, Options{Dispatcher: DispatcherOptions{Getenv: func(string) string { return "sk-test-secret-0123456789" }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc.Caller = c
	return sc
}

var page = calltypes.MustParsePage(`url: https://shop.example/
title: Shop
[0] searchbox "Search products"
[1] button "Search"
Welcome to the shop.
[2] link "Trail running shoes"
from 89 EUR.`)

// editPage is p written, changed by edit, and read back.
func editPage(p calltypes.Page, edit func(string) string) calltypes.Page {
	return calltypes.MustParsePage(edit(p.Render()))
}

// withText is p with a line of words added at its end.
func withText(p calltypes.Page, text string) calltypes.Page {
	p.Lines = append(slices.Clone(p.Lines), calltypes.Line{Text: text})
	return p
}

// inputs are one input of each built-in type.
var inputs = map[string]any{
	"planning":   calltypes.PlanInput{Goal: "find trail running shoes and open the first result", Page: page},
	"click-pick": calltypes.PickInput{Goal: "search for 'trail running shoes'", Page: page},
	"yes-no":     calltypes.CheckInput{Question: "Is the goal met?", Goal: "find trail running shoes", Page: page},
	"summarize":  calltypes.SummaryInput{Goal: "what do trail running shoes cost", Page: page},
}

func TestEveryBuiltinCarriesItsOwnCapAndN(t *testing.T) {
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	for _, typ := range calltypes.Default().Types() {
		out, rec, err := sc.Call(context.Background(), typ.Name, asJSON(inputs[typ.Name]), CallOptions{})
		if err != nil {
			t.Fatalf("%s: %v", typ.Name, err)
		}
		sc.mu.Lock()
		body := sc.bodies[len(sc.bodies)-1]
		sc.mu.Unlock()
		if body["max_tokens"] != float64(typ.MaxTokens) || body["n"] != 1.0 {
			t.Errorf("%s: request max_tokens %v, n %v; want %d and 1", typ.Name, body["max_tokens"], body["n"], typ.MaxTokens)
		}
		rf, _ := body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		if rf["type"] != "json_schema" || js["name"] != typ.Name || js["strict"] != true {
			t.Errorf("%s: response_format %v", typ.Name, rf)
		}
		// The reservation is the estimate rule: the larger prompt count
		// plus the cap.
		in, _ := json.Marshal(inputs[typ.Name])
		want := Estimate([]tokens.Message{{Role: "system", Content: typ.System}, {Role: "user", Content: typ.Message(in)}}, typ.MaxTokens, 1)
		if rec.TokensReserved != want || rec.MaxTokens != typ.MaxTokens || rec.N != 1 || rec.Deployment != "d" || out == nil {
			t.Errorf("%s: record %+v, want %d reserved", typ.Name, rec, want)
		}
	}
	st := sc.sim.Stats().Deployments[0]
	if st.Accepted != 4 || st.RateLimited.Total() != 0 {
		t.Errorf("simulator saw %+v", st)
	}
}

// A type whose cap is too small for what the model says.
func tinyType(maxTokens int64) calltypes.Type {
	return calltypes.Type{
		Name: "tiny", MaxTokens: maxTokens, System: "Repeat the input.",
		Schema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"goal": map[string]any{"type": "string"}}, "required": []string{"goal"}},
		Parse:  calltypes.JSONParser[goalOnly](nil),
	}
}

type goalOnly struct {
	Goal string `json:"goal"`
}

// tinyCall is tinyType's typed name.
const tinyCall calltypes.Typed[goalOnly, goalOnly] = "tiny"

// asJSON is v as JSON, the input of an untyped call.
func asJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestTruncatedAnswersNeverReachTheCaller(t *testing.T) {
	for _, policy := range []Truncation{FailTruncated, RetryTruncated} {
		sc := newSimCaller(t, "echo", nil)
		if err := sc.Types.Register(tinyType(3)); err != nil {
			t.Fatal(err)
		}
		sc.Truncation = policy
		out, _, err := sc.Call(context.Background(), "tiny", asJSON(goalOnly{Goal: "a goal that is longer than three tokens"}), CallOptions{})
		var tr *TruncatedError
		if !errors.As(err, &tr) || out != nil {
			t.Fatalf("policy %d: %v, output %v", policy, err, out)
		}
		wantCalls, wantCap := 1, int64(3)
		if policy == RetryTruncated {
			wantCalls, wantCap = 2, 6
		}
		if len(sc.bodies) != wantCalls || tr.MaxTokens != wantCap || sc.Stats()["tiny"].Truncated != int64(wantCalls) {
			t.Errorf("policy %d: %d requests, last cap %d, stats %+v", policy, len(sc.bodies), tr.MaxTokens, sc.Stats()["tiny"])
		}
	}
	// With room, the retry succeeds.
	sc := newSimCaller(t, "echo", nil)
	sc.Types.Register(tinyType(6)) // the answer is about 8 tokens
	sc.Truncation = RetryTruncated
	out, rec, err := Call(context.Background(), sc.Caller, tinyCall, goalOnly{Goal: "short goal here now"}, CallOptions{})
	if err != nil || rec.MaxTokens != 12 || out.Goal != "short goal here now" || rec.Retries != 1 {
		t.Errorf("retry with twice the cap: %+v, %v", rec, err)
	}
}

// flaky answers garbage first, then what the echo model would.
type flaky struct {
	mu sync.Mutex
	n  int
}

func (f *flaky) Reply(r azuresim.Request) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n%2 == 1 {
		return `{"goal": "cut`
	}
	return `{"goal":"fixed"}`
}

func TestInvalidAnswerGetsOneRepair(t *testing.T) {
	sc := newSimCaller(t, "flaky", map[string]azuresim.Model{"flaky": &flaky{}})
	sc.Types.Register(tinyType(64))
	out, rec, err := Call(context.Background(), sc.Caller, tinyCall, goalOnly{Goal: "g"}, CallOptions{})
	if err != nil || out.Goal != "fixed" || rec.Retries != 1 {
		t.Fatalf("repair: %+v, %v", rec, err)
	}
	msgs := sc.bodies[1]["messages"].([]any)
	if len(msgs) != 4 || !strings.Contains(msgs[3].(map[string]any)["content"].(string), "not valid") {
		t.Errorf("the repair request: %v", msgs)
	}
	if st := sc.Stats()["tiny"]; st.Repaired != 1 || st.Invalid != 0 {
		t.Errorf("stats %+v", st)
	}

	// An answer still invalid after the repair is a typed error.
	sc = newSimCaller(t, "echo", nil)
	sc.Types.Register(tinyType(64))
	_, _, err = sc.Call(context.Background(), "tiny", asJSON(map[string]any{"not": "a plan input"}), CallOptions{})
	var inv *InvalidOutputError
	if !errors.As(err, &inv) || sc.Stats()["tiny"].Invalid != 1 || len(sc.bodies) != 2 {
		t.Fatalf("invalid twice: %v (%d requests)", err, len(sc.bodies))
	}
}

func TestCassetteRecordsAndReplaysByteIdentically(t *testing.T) {
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	var first bytes.Buffer
	sc.Cassette = NewCassette(&first, sc.Dispatcher.Secrets()...)
	type answer struct {
		Output any
		Report Report
	}
	var want []answer
	// The key ends up in a page by accident: it must not reach the cassette.
	leaky := inputs["yes-no"].(calltypes.CheckInput)
	leaky.Page = withText(leaky.Page, "token=sk-test-secret-0123456789")
	calls := []struct {
		typ string
		in  any
	}{{"planning", inputs["planning"]}, {"click-pick", inputs["click-pick"]}, {"yes-no", leaky}, {"summarize", inputs["summarize"]}, {"click-pick", inputs["click-pick"]}}
	for _, c := range calls {
		out, rec, err := sc.Call(context.Background(), c.typ, asJSON(c.in), CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, answer{out, rec})
	}
	if strings.Contains(first.String(), "sk-test-secret") || !strings.Contains(first.String(), redact.Marker) {
		t.Fatalf("the key reached the cassette")
	}

	// Replay with no dispatcher at all, recording again.
	cas, err := LoadCassette(bytes.NewReader(first.Bytes()), "run.jsonl", sc.Dispatcher.Secrets()...)
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	cas.RecordTo(&second)
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	for i, c := range calls {
		out, rec, err := replayer.Call(context.Background(), c.typ, asJSON(c.in), CallOptions{})
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		a, _ := json.Marshal(answer{out, rec})
		b, _ := json.Marshal(want[i])
		if !bytes.Equal(a, b) {
			t.Errorf("replayed record %s, recorded %s", a, b)
		}
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("the replay's recording differs from the original:\n%s\n%s", first.String(), second.String())
	}

	// A request the cassette did not record says what differs.
	changed := inputs["summarize"].(calltypes.SummaryInput)
	changed.Goal = "what do road shoes cost"
	_, _, err = replayer.Call(context.Background(), "summarize", asJSON(changed), CallOptions{})
	if !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "messages[1].content") {
		t.Errorf("mismatch: %v", err)
	}
}

func TestOpenAppliesTheConfigsOverrides(t *testing.T) {
	f, _, err := config.Parse("headroom.yaml", []byte(`
deployments:
  - {name: d, endpoint: "https://d.openai.azure.com", tpm: 10000, auth: {api_key_env: K}}
calltypes:
  click-pick: {max_tokens: 128}
  summarize: {max_tokens: 1200, priority: background}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(context.Background(), f, Options{Dispatcher: DispatcherOptions{Getenv: func(string) string { return "k" }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ct, _ := c.Types.Lookup("click-pick"); ct.MaxTokens != 128 {
		t.Errorf("click-pick cap %d", ct.MaxTokens)
	}
	if st, _ := c.Types.Lookup("summarize"); st.MaxTokens != 1200 || st.Priority != calltypes.Background {
		t.Errorf("summarize %+v", st)
	}
	// A config built in code is validated too.
	bad := &config.File{Budget: budget.Config{Margin: 7, Deployments: f.Budget.Deployments}}
	if _, err := Open(context.Background(), bad, Options{}); err == nil || !strings.Contains(err.Error(), "margin") {
		t.Errorf("margin 7: %v", err)
	}
	// A Redis URL with no driver linked says what to import.
	noDriver := &config.File{Budget: budget.Config{Redis: "redis://127.0.0.1:1/0", Deployments: f.Budget.Deployments}}
	if _, err := Open(context.Background(), noDriver, Options{}); err == nil || !strings.Contains(err.Error(), "budget/redisstore") {
		t.Errorf("redis without its driver: %v", err)
	}
}

func TestTypedCallChecksItsTypes(t *testing.T) {
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	a, rep, err := Call(context.Background(), sc.Caller, calltypes.PickCall, inputs["click-pick"].(calltypes.PickInput), CallOptions{Session: "s1"})
	if err != nil || rep.Type != calltypes.ClickPick || rep.PromptTokens == 0 || rep.TokensUsed == 0 {
		t.Fatalf("typed click-pick: %+v, %+v, %v", a, rep, err)
	}
	if back, err := calltypes.ParseAction(a.String()); err != nil || back.Kind != a.Kind || back.Index != a.Index {
		t.Errorf("the answer %+v does not read back from %q: %+v, %v", a, a, back, err)
	}
	// A typed name whose registered parser gives another type fails
	// plainly, never with a panic.
	wrong := calltypes.Typed[goalOnly, calltypes.Plan]("tiny")
	sc2 := newSimCaller(t, "echo", nil)
	sc2.Types.Register(tinyType(64))
	if _, _, err := Call(context.Background(), sc2.Caller, wrong, goalOnly{Goal: "g"}, CallOptions{}); err == nil || !strings.Contains(err.Error(), "JSONParser") {
		t.Errorf("mismatched typed name: %v", err)
	}
}

func TestOpenRefusesACassetteThatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(context.Background(), &config.File{}, Options{Replay: fifo})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "regular file") {
			t.Errorf("a FIFO as the cassette: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO as the cassette hangs")
	}
}
