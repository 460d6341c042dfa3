package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

const testKey = "sk-test-secret-0123456789" // newSimCaller's

func TestAReplayThroughOpenMatchesARequestThatHeldTheKey(t *testing.T) {
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var rec bytes.Buffer
	sc.Cassette = NewCassette(&rec, sc.Dispatcher.Secrets()...)
	leaky := inputs["yes-no"].(calltypes.CheckInput)
	leaky.Page = withText(leaky.Page, "key="+testKey)
	want, _, err := sc.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, rec.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rec.String(), testKey) {
		t.Fatal("the key reached the cassette")
	}
	// The same config, the key in its environment variable: Open scrubs it
	// from the live request, which then matches.
	f := &config.File{Budget: budget.Config{Deployments: []budget.Deployment{{Name: "d", Endpoint: "http://127.0.0.1:1", Model: "gpt-4o", TPM: 1000, Auth: budget.Auth{APIKeyEnv: "K"}}}}}
	c, err := Open(context.Background(), f, Options{Replay: path, Dispatcher: DispatcherOptions{Getenv: func(string) string { return testKey }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, _, err := c.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{})
	if err != nil {
		t.Fatalf("the replay of a request that held the key: %v", err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Errorf("replayed %s, recorded %s", a, b)
	}
	// A miss prints where the request differs, never the key.
	leaky.Goal = "something else entirely " + testKey
	_, _, err = c.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{})
	if !errors.Is(err, ErrReplayMismatch) || strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "0123456789") {
		t.Errorf("mismatch: %v", err)
	}
}

func TestCassetteScrubsSecretNamedFields(t *testing.T) {
	body := func(pw string) []byte {
		in, _ := json.Marshal(map[string]any{"form": map[string]any{"user": "ann", "password": pw, "credentials": map[string]string{"api_key": pw + "k"}}})
		b, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": string(in)}}})
		return b
	}
	var buf bytes.Buffer
	rc := NewCassette(&buf)
	if err := rc.record(Exchange{Report: Report{Type: "t"}, Key: requestKey(rc.scrub(body("pw-canary-1"))), Request: body("pw-canary-1"), Response: json.RawMessage(`{"choices":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "pw-canary") || !strings.Contains(buf.String(), `\"user\":\"ann\"`) {
		t.Fatalf("cassette line: %s", buf.String())
	}
	c, err := LoadCassette(bytes.NewReader(buf.Bytes()), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.answer("t", body("pw-canary-2")); err != nil {
		t.Errorf("a request that differs only in a secret field did not match: %v", err)
	}
	other := bytes.Replace(body("pw-canary-3"), []byte("ann"), []byte("bob"), 1)
	if _, err := c.answer("t", other); !errors.Is(err, ErrReplayMismatch) || strings.Contains(err.Error(), "pw-canary") {
		t.Errorf("mismatch: %v", err)
	}
}

func TestAReplayWithNoKeyStillMatchesARequestThatHeldIt(t *testing.T) {
	rec, leaky := recordLeakyCall(t)
	// Replayed where the key is not known: the marker stands for the word.
	cas, err := LoadCassette(bytes.NewReader(rec.Bytes()), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	if _, _, err := replayer.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{}); err != nil {
		t.Fatalf("replay with no key: %v", err)
	}
	// Once is all it was recorded.
	if _, _, err := replayer.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{}); !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "fewer times") {
		t.Errorf("asked twice: %v", err)
	}
	// A miss says which field of the input differs, and shows no key.
	changed := leaky
	changed.Goal = "find road shoes"
	_, _, err = replayer.Call(context.Background(), "yes-no", asJSON(changed), CallOptions{})
	if !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "messages[1].content.goal") || strings.Contains(err.Error(), "0123456789") {
		t.Errorf("mismatch: %v", err)
	}
	// The word is a word: text that differs more than that does not match.
	other := leaky
	other.Page = editPage(other.Page, func(s string) string { return strings.Replace(s, testKey, "two words", 1) })
	if _, _, err := replayer.Call(context.Background(), "yes-no", asJSON(other), CallOptions{}); !errors.Is(err, ErrReplayMismatch) {
		t.Errorf("a marker matched two words: %v", err)
	}
}

func TestMasks(t *testing.T) {
	m := "[redacted]"
	for _, c := range []struct {
		rec, live string
		want      bool
	}{
		{"key=" + m + ".", "key=abc.", true},
		{"key=" + m, "key=abc", true},
		{m + " and " + m, "a and b", true},
		{"key=" + m + ".", "key=.", false},
		{"key=" + m + ".", "key=a b.", false},
		{"key=" + m + ".", "kex=abc.", false},
		{"key=" + m + ".", "key=abc!", false},
	} {
		if got := masks(c.rec, c.live); got != c.want {
			t.Errorf("masks(%q, %q) = %v", c.rec, c.live, got)
		}
	}
}

// recordLeakyCall records one yes-no call whose page text holds the
// dispatcher's key, and returns the cassette and the input.
func recordLeakyCall(t *testing.T) (*bytes.Buffer, calltypes.CheckInput) {
	t.Helper()
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	var rec bytes.Buffer
	sc.Cassette = NewCassette(&rec, sc.Dispatcher.Secrets()...)
	leaky := inputs["yes-no"].(calltypes.CheckInput)
	leaky.Page = withText(leaky.Page, "key="+testKey+".")
	if _, _, err := sc.Call(context.Background(), "yes-no", asJSON(leaky), CallOptions{}); err != nil {
		t.Fatal(err)
	}
	return &rec, leaky
}
