package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planConfig is the article's budget: 420,000 TPM in three quotas, no
// credentials named.
const planConfig = `margin: 0.85
deployments:
  - {name: a, endpoint: "https://a.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: swedencentral, subscription: s1, type: standard, tpm: 240000}
  - {name: b, endpoint: "https://b.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: eastus2, subscription: s2, type: standard, tpm: 120000}
  - {name: c, endpoint: "https://c.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: westeurope, subscription: s3, type: standard, tpm: 60000}
`

// planRuns are result.json files of real offline runs of the testdata
// tasks, kept beside the package that reads them.
const planRuns = "../../budget/plan/testdata/runs"

func writePlanFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sizing is the five figures every plan prints, twice.
type sizing struct {
	Agents               *int     `json:"agents"`
	AgentsByTokens       *int     `json:"agents_by_tokens"`
	AgentsByRequests     *int     `json:"agents_by_requests"`
	TokensPerAgentMinute *float64 `json:"tokens_per_agent_minute"`
	StaggerPerS          *float64 `json:"stagger_per_s"`
}

func (s sizing) complete() bool {
	return s.Agents != nil && s.AgentsByTokens != nil && s.AgentsByRequests != nil && s.TokensPerAgentMinute != nil && s.StaggerPerS != nil
}

type planJSON struct {
	sizing
	FlatCap sizing  `json:"flat_cap"`
	Factor  float64 `json:"factor"`
	Binding string  `json:"binding"`
	Runs    *struct {
		Runs       int     `json:"runs"`
		Percentile float64 `json:"percentile"`
	} `json:"runs"`
}

func planOf(t *testing.T, args ...string) planJSON {
	t.Helper()
	code, out, errb := runArgs(t, append([]string{"budget", "plan", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var p planJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !p.complete() || !p.FlatCap.complete() {
		t.Fatalf("missing figures in\n%s", out)
	}
	return p
}

func TestBudgetPlanArticle(t *testing.T) {
	cfg := writePlanFile(t, "headroom.yaml", planConfig)
	p := planOf(t, "--config", cfg, "--steps-per-minute", "4", "--prompt-tokens", "1240")
	if *p.FlatCap.Agents != 16 || *p.FlatCap.TokensPerAgentMinute != 21_344 {
		t.Errorf("flat cap: %d agents at %v tokens an agent-minute; want 16 at 21,344", *p.FlatCap.Agents, *p.FlatCap.TokensPerAgentMinute)
	}
	if *p.Agents < 3**p.FlatCap.Agents || p.Binding != "tokens" || p.Runs != nil {
		t.Errorf("%d agents (%s) with the caps, %d flat", *p.Agents, p.Binding, *p.FlatCap.Agents)
	}
	// The config from the environment, the same plan.
	t.Setenv("HEADROOM_CONFIG", cfg)
	if q := planOf(t); *q.Agents != *p.Agents || *q.FlatCap.Agents != 16 {
		t.Errorf("from $HEADROOM_CONFIG: %d, %d agents", *q.Agents, *q.FlatCap.Agents)
	}
	code, out, _ := runArgs(t, "budget", "plan")
	for _, want := range []string{"357000 tokens a minute", "click-pick", "agents by requests", "tokens bind", "starts a second"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("table (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

func TestBudgetPlanRuns(t *testing.T) {
	cfg := writePlanFile(t, "headroom.yaml", planConfig)
	p := planOf(t, "--config", cfg, "--runs", planRuns, "--steps-per-minute", "4")
	if p.Runs == nil || p.Runs.Runs < 10 || p.Runs.Percentile != 99 {
		t.Fatalf("runs: %+v", p.Runs)
	}
	if p.Factor < 5 || p.Factor > 8 || *p.Agents < 3**p.FlatCap.Agents { // 6.65 on the view's runs
		t.Errorf("factor %.2f, %d agents with the caps and %d flat", p.Factor, *p.Agents, *p.FlatCap.Agents)
	}
	code, out, _ := runArgs(t, "budget", "plan", "--config", cfg, "--runs", planRuns)
	if code != exitOK || !strings.Contains(out, "p99") || !strings.Contains(out, "mean") {
		t.Errorf("table (exit %d) does not say it plans at the p99 beside the mean:\n%s", code, out)
	}
}

func TestBudgetPlanBadInput(t *testing.T) {
	t.Setenv("HEADROOM_CONFIG", "")
	cfg := writePlanFile(t, "headroom.yaml", planConfig)
	noDeps := writePlanFile(t, "types.yaml", "calltypes:\n  yes-no: {max_tokens: 48}\n")
	badYAML := writePlanFile(t, "bad.yaml", "deployments:\n  - {name: a, tpm: [\n")
	noTPM := writePlanFile(t, "no-tpm.yaml", "deployments:\n  - {name: a, endpoint: \"https://a.openai.azure.com\", model: gpt-4o}\n")
	empty := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "result.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"-h"}, exitOK, ""},
		{nil, exitUsage, "--config FILE"},
		{[]string{"--config", filepath.Join(empty, "nope.yaml")}, exitUsage, "nope.yaml"},
		{[]string{"--config", noDeps}, exitUsage, "types.yaml: deployments: no deployments"},
		{[]string{"--config", badYAML}, exitUsage, "bad.yaml:"},
		{[]string{"--config", noTPM}, exitUsage, "no-tpm.yaml:2: deployments[0].tpm"},
		{[]string{"--config", cfg, "stray"}, exitUsage, `unexpected argument "stray"`},
		{[]string{"--config", cfg, "--mix", "click-pik"}, exitUsage, `"click-pik" is not a call type`},
		{[]string{"--config", cfg, "--mix", "yes-no:0"}, exitUsage, "--mix"},
		{[]string{"--config", cfg, "--steps-per-minute", "0"}, exitUsage, "--steps-per-minute"},
		{[]string{"--config", cfg, "--flat-cap", "-1"}, exitUsage, "--flat-cap"},
		{[]string{"--config", cfg, "--prompt-tokens", "-5"}, exitUsage, "--prompt-tokens"},
		{[]string{"--config", cfg, "--runs", planRuns, "--mix", "agent"}, exitUsage, "--mix and --runs"},
		{[]string{"--config", cfg, "--runs", empty}, exitUsage, empty + ": no usable runs"},
		{[]string{"--config", cfg, "--runs", broken}, exitUsage, "skipped " + filepath.Join(broken, "result.json")},
		{[]string{"--config", cfg, "--runs", filepath.Join(empty, "nope")}, exitUsage, "nope"},
		{[]string{"--config", cfg, "--mix", "agent", "--json"}, exitOK, ""},
	}
	for _, c := range cases {
		code, _, errb := runArgs(t, append([]string{"budget", "plan"}, c.args...)...)
		if code != c.code || !strings.Contains(errb, c.want) {
			t.Errorf("budget plan %v: exit %d, stderr %q; want %d and %q", c.args, code, errb, c.code, c.want)
		}
	}
}
