package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCallOnTheEmbeddedSimulator(t *testing.T) {
	dir := t.TempDir()
	cassette := filepath.Join(dir, "run.jsonl")
	in := "../../calltypes/examples/click-pick.json"
	code, out, errs := runArgs(t, "call", "click-pick", "--input", in, "--record-calls", cassette)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	for _, k := range []string{"type", "deployment", "max_tokens", "n", "tokens_reserved", "tokens_used", "latency_ms", "output"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("the record lacks %q: %s", k, out)
		}
	}
	if rec["n"] != 1.0 || rec["max_tokens"] != 192.0 {
		t.Errorf("record %s", out)
	}
	// The same call answered from the cassette, with no simulator.
	code, replayed, errs := runArgs(t, "call", "click-pick", "--input", in, "--cassette", cassette)
	if code != 0 || replayed != out {
		t.Errorf("replay exit %d (%s):\n%s\nwant\n%s", code, errs, replayed, out)
	}
	data, _ := os.ReadFile(cassette)
	if strings.Count(string(data), "\n") != 1 || strings.Contains(string(data), "embedded\"") {
		t.Errorf("cassette: %s", data)
	}
	// Replayed and recorded again: a copy, byte for byte.
	again := filepath.Join(dir, "again.jsonl")
	if code, _, errs := runArgs(t, "call", "click-pick", "--input", in, "--cassette", cassette, "--record-calls", again); code != 0 {
		t.Fatalf("replay recording again: exit %d: %s", code, errs)
	}
	if copied, _ := os.ReadFile(again); string(copied) != string(data) {
		t.Errorf("recorded again:\n%s\nwant\n%s", copied, data)
	}
	code, _, errs = runArgs(t, "call", "click-pick", "--input", in, "--cassette", cassette, "--record-calls", filepath.Join(dir, ".", "run.jsonl"))
	if code != exitUsage || !strings.Contains(errs, "is the --cassette being replayed") {
		t.Errorf("recording over the cassette replayed: exit %d, %s", code, errs)
	}
}

func TestCallRefusesBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"goal": "x",`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "click-pick", "--input", bad}, "not JSON: it ends at byte"},
		{[]string{"call", "extract-tabel", "--input", bad}, `unknown call type "extract-tabel"`},
		{[]string{"call", "click-pick"}, "want --input FILE"},
		{[]string{"call", "--input", bad}, "want TYPE"},
		{[]string{"call", "click-pick", "--input", "/no/such.json"}, "/no/such.json"},
	} {
		code, _, errs := runArgs(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("headroom %v: exit %d, stderr %q, want 2 with %q", c.args, code, errs, c.want)
		}
	}
}

func TestCallWithAConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("deployments:\n  - {name: d, endpoint: 'https://d.openai.azure.com', tpm: 1000, auth: {api_key_env: K}}\ncalltypes:\n  click-pik: {max_tokens: 100}\n"), 0o600)
	code, _, errs := runArgs(t, "call", "click-pick", "--input", "../../calltypes/examples/click-pick.json", "--config", bad)
	if code != 2 || !strings.Contains(errs, bad+":4: calltypes.click-pik:") {
		t.Errorf("an unknown type in the config: exit %d, %q", code, errs)
	}
	t.Setenv("UNSET_KEY_FOR_TEST", "")
	nokey := filepath.Join(dir, "nokey.yaml")
	os.WriteFile(nokey, []byte("deployments:\n  - {name: d, endpoint: 'https://d.openai.azure.com', tpm: 1000, auth: {api_key_env: UNSET_KEY_FOR_TEST}}\n"), 0o600)
	code, _, errs = runArgs(t, "call", "click-pick", "--input", "../../calltypes/examples/click-pick.json", "--config", nokey)
	if code != 2 || !strings.Contains(errs, "UNSET_KEY_FOR_TEST") {
		t.Errorf("a key variable that is unset: exit %d, %q", code, errs)
	}
}

// An input its type does not take is bad usage, refused before any
// request: the deployment never hears of it.
func TestCallRefusesInputsTheTypeDoesNotTake(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer ts.Close()
	dir := t.TempDir()
	t.Setenv("CALL_INPUT_TEST_KEY", "sk-test-0123456789")
	cfg := filepath.Join(dir, "cfg.yaml")
	os.WriteFile(cfg, []byte("deployments:\n  - {name: d, endpoint: '"+ts.URL+"', model: gpt-4o, tpm: 100000, auth: {api_key_env: CALL_INPUT_TEST_KEY}}\n"), 0o600)
	for _, c := range []struct{ name, in, want string }{
		{"an array", `[]`, "not a JSON object"},
		{"no goal", `{"page": {"url": "https://x.example/", "title": "x"}}`, `field "goal" is missing`},
		{"an unknown field", `{"goal": "find shoes", "colour": "red"}`, `field "colour" is not a field`},
	} {
		in := filepath.Join(dir, "in.json")
		os.WriteFile(in, []byte(c.in), 0o600)
		code, _, errs := runArgs(t, "call", "click-pick", "--input", in, "--config", cfg)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 with %q", c.name, code, errs, c.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the deployment got %d requests for inputs refused", n)
	}
}

// A config whose Redis is not there is a budget failure (3), said in
// words naming Redis, not bad usage.
func TestCallWithAnUnreachableRedis(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CALL_REDIS_TEST_KEY", "sk-test-0123456789")
	cfg := filepath.Join(dir, "cfg.yaml")
	os.WriteFile(cfg, []byte("redis: redis://"+freeAddr(t)+"/0\ndeployments:\n  - {name: d, endpoint: 'http://127.0.0.1:1', model: gpt-4o, tpm: 100000, auth: {api_key_env: CALL_REDIS_TEST_KEY}}\n"), 0o600)
	code, _, errs := runArgs(t, "call", "click-pick", "--input", "../../calltypes/examples/click-pick.json", "--config", cfg)
	if code != 3 || !strings.Contains(strings.ToLower(errs), "redis") {
		t.Errorf("exit %d, stderr %q: want 3 naming Redis", code, errs)
	}
	t.Log(errs)
}
