package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// heuristicSim serves deployments NAME:MODEL (6M TPM each) answered by
// the heuristic stand-in, on a loopback port, until the test ends.
func heuristicSim(t *testing.T, deps ...string) *azuresim.Running {
	t.Helper()
	var ds []azuresim.Deployment
	for _, d := range deps {
		name, model, _ := strings.Cut(d, ":")
		ds = append(ds, azuresim.Deployment{Name: name, Model: model, TPM: 6_000_000, Reply: "heuristic"})
	}
	sim, err := azuresim.New(azuresim.Config{Deployments: ds}, azuresim.Options{Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run
}

// headroom call on each family of deployment, against the simulator over
// HTTP: the reasoning models take max_completion_tokens and report their
// reasoning, gpt-4o still takes max_tokens; an unknown model needs its
// family stated, at its line.
func TestCallOnEachModelFamily(t *testing.T) {
	run := heuristicSim(t, "o4mini:o4-mini", "gpt5mini:gpt-5-mini", "gpt4o:gpt-4o")
	t.Setenv("MODELS_TEST_KEY", "sk-models-test-0123456789")
	dir := t.TempDir()
	for _, c := range []struct {
		dep, model string
		cap        float64
		reasoning  bool
	}{
		{"o4mini", "o4-mini", 64 + 1024, true},
		{"gpt5mini", "gpt-5-mini", 64 + 256, true},
		{"gpt4o", "gpt-4o", 64, false},
	} {
		cfg := writeFile(t, dir, c.dep+".yaml", fmt.Sprintf("deployments:\n  - {name: %s, endpoint: %q, model: %s, tpm: 1000000, auth: {api_key_env: MODELS_TEST_KEY}}\n", c.dep, run.URL, c.model))
		code, out, errs := runArgs(t, "call", "yes-no", "--config", cfg, "--input", "../../calltypes/examples/yes-no.json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.model, code, errs)
		}
		var r struct {
			MaxTokens       float64 `json:"max_tokens"`
			ReasoningTokens float64 `json:"reasoning_tokens"`
			ReasoningEffort string  `json:"reasoning_effort"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v\n%s", c.model, err, out)
		}
		if r.MaxTokens != c.cap || (r.ReasoningTokens > 0) != c.reasoning || (r.ReasoningEffort != "") != c.reasoning {
			t.Errorf("%s: report %+v, want cap %v, reasoning %v\n%s", c.model, r, c.cap, c.reasoning, out)
		}
	}
	unknown := writeFile(t, dir, "unknown.yaml", fmt.Sprintf("deployments:\n  - {name: ft, endpoint: %q, model: contoso-ft-7, tpm: 1000000, auth: {api_key_env: MODELS_TEST_KEY}}\n", run.URL))
	code, _, errs := runArgs(t, "call", "yes-no", "--config", unknown, "--input", "../../calltypes/examples/yes-no.json")
	if code != exitUsage || !strings.Contains(errs, filepath.Base(unknown)+":2: deployments[0].model:") || !strings.Contains(errs, "family: chat") {
		t.Errorf("an unknown model: exit %d, %q", code, errs)
	}
}

// A task's answer_type, defined in the config, answers the goal as
// structured data in place of the summary; one the config lacks is bad
// usage naming the task file.
func TestRunAnswersWithTheTasksAnswerType(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "types.yaml", `calltypes:
  animal-facts:
    max_tokens: 200
    system: You report what the page says of the animal the goal names.
    schema:
      type: object
      additionalProperties: false
      required: [animal, sleeps_standing]
      properties:
        animal: {type: string}
        sleeps_standing: {type: boolean}
`)
	task := writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL)+"answer_type: animal-facts\n")
	r := runBinary(t, []string{"HEADROOM_CONFIG=" + cfg}, "run", task)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, "stdout", []byte(r.stdout))
	var data map[string]any
	if err := json.Unmarshal(res.Data, &data); err != nil || data["animal"] == nil || data["sleeps_standing"] == nil || !strings.HasPrefix(res.Answer, "{") {
		t.Errorf("data %#v, answer %q: want the type's fields", res.Data, res.Answer)
	}
	last := res.Calls[len(res.Calls)-1]
	if last.Type != "animal-facts" {
		t.Errorf("the last call is %s, want animal-facts", last.Type)
	}

	missing := writeFile(t, dir, "missing.yaml", zebraTask(srv.URL)+"answer_type: no-such-type\n")
	r = runBinary(t, nil, "run", missing)
	if r.code != exitUsage || !strings.Contains(r.stderr, "missing.yaml: answer_type: no call type \"no-such-type\"") {
		t.Errorf("a missing answer_type: exit %d\n%s", r.code, r.stderr)
	}
}

// A run whose default pool has no room left completes on the fallback
// pool, every such call marked; the fallback is another model family.
func TestRunCompletesOnTheFallbackWhenThePrimaryIsExhausted(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	run := heuristicSim(t, "big:gpt-4o", "small:o4-mini")
	dir := t.TempDir()
	// The budget gives the primary 1 token a minute: it can serve none of
	// the task's calls. (A primary that is full until after a call's
	// deadline sheds it to the fallback the same way: llm's tests.)
	cfg := writeFile(t, dir, "cfg.yaml", fmt.Sprintf(`deployments:
  - {name: big, endpoint: %[1]q, model: gpt-4o, tpm: 1, auth: {api_key_env: FALLBACK_TEST_KEY}}
  - {name: small, endpoint: %[1]q, model: o4-mini, pool: small, tpm: 6000000, auth: {api_key_env: FALLBACK_TEST_KEY}}
fallback: {pool: small, share: 0}
`, run.URL))
	task := writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL))
	r := runBinary(t, []string{"FALLBACK_TEST_KEY=k"}, "run", task, "--config", cfg)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, "stdout", []byte(r.stdout))
	on := map[bool]int{}
	for _, c := range allCalls(res) {
		on[c.Fallback]++
		if c.Fallback && (c.Deployment != "small" || c.ReasoningEffort == "") {
			t.Errorf("a fallback call %+v: want small, shaped for o4-mini", c)
		}
	}
	if on[true] == 0 || on[false] > 0 {
		t.Errorf("calls on the primary %d, on the fallback %d: want all on the fallback", on[false], on[true])
	}
	t.Logf("%d calls: %d on the primary, %d on the fallback", on[true]+on[false], on[false], on[true])
}
