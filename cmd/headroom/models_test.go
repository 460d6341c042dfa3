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

// headroom call on each family of deployment, against the simulator over
// HTTP: the reasoning models take max_completion_tokens and report their
// reasoning, gpt-4o still takes max_tokens; an unknown model needs its
// family stated, at its line.
func TestCallOnEachModelFamily(t *testing.T) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "o4mini", Model: "o4-mini", TPM: 1_000_000, Reply: "heuristic"},
		{Name: "gpt5mini", Model: "gpt-5-mini", TPM: 1_000_000, Reply: "heuristic"},
		{Name: "gpt4o", Model: "gpt-4o", TPM: 1_000_000, Reply: "heuristic"},
	}}, azuresim.Options{Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
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
	data, ok := res.Data.(map[string]any)
	if !ok || data["animal"] == nil || data["sleeps_standing"] == nil || !strings.HasPrefix(res.Answer, "{") {
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
