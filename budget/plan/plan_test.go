package plan

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
)

// articleConfig is the article's budget: 420,000 TPM over three
// deployments in three subscriptions, spent to 85%. It names no
// credentials, as a fleet's file being sized may not yet.
const articleConfig = `margin: 0.85
deployments:
  - {name: a, endpoint: "https://a.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: swedencentral, subscription: s1, type: standard, tpm: 240000}
  - {name: b, endpoint: "https://b.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: eastus2, subscription: s2, type: standard, tpm: 120000}
  - {name: c, endpoint: "https://c.openai.azure.com", deployment: gpt-4o, model: gpt-4o, model_version: "2024-08-06", region: westeurope, subscription: s3, type: standard, tpm: 60000}
`

// load writes a config and reads it back as the command does: its
// budget, and the registry with its overrides applied.
func load(t *testing.T, yaml string) (Budget, *calltypes.Registry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "headroom.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	types := calltypes.Default()
	if err := f.Apply(types); err != nil {
		t.Fatal(err)
	}
	b, err := BudgetOf(&f.Budget)
	if err != nil {
		t.Fatal(err)
	}
	return b, types
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestArticleArithmetic(t *testing.T) {
	b, types := load(t, articleConfig)
	if b.TokensPerMinute() != 357_000 || b.RPM() != 2_520 || len(b.Quotas) != 3 {
		t.Fatalf("budget: %v tokens a minute, %d RPM, %d quotas; want 357,000, 2,520 (6 per 1,000 TPM), 3", b.TokensPerMinute(), b.RPM(), len(b.Quotas))
	}
	p, err := Model(b, types, ClickPick(), Options{PromptTokens: 1240, StepsPerMinute: 4})
	if err != nil {
		t.Fatal(err)
	}
	click, _ := types.Lookup(calltypes.ClickPick)
	tuned := 4 * float64(1240+click.MaxTokens)
	// The lazy cap: 4 × (1,240 + 4,096) = 21,344 tokens an agent-minute,
	// 357,000 / 21,344 = 16.7 agents.
	f := p.FlatCap
	if f.TokensPerAgentMinute != 21_344 || f.AgentsByTokens != 16 || f.Agents != 16 || f.Binding != Tokens {
		t.Errorf("flat cap: %v tokens an agent-minute, %d agents by tokens, %d agents (%s); want 21,344, 16, 16 (tokens)", f.TokensPerAgentMinute, f.AgentsByTokens, f.Agents, f.Binding)
	}
	if p.TokensPerAgentMinute != tuned || p.AgentsByTokens != int(357_000/tuned) || p.Agents != p.AgentsByTokens {
		t.Errorf("tuned: %v tokens an agent-minute, %d agents; want %v, %d", p.TokensPerAgentMinute, p.Agents, tuned, int(357_000/tuned))
	}
	if p.Agents < 3*f.Agents {
		t.Errorf("tuned caps feed %d agents, the flat cap %d: want at least 3×", p.Agents, f.Agents)
	}
	// Requests: 2,520 RPM over 4 calls an agent-minute.
	if p.AgentsByRequests != 630 || f.AgentsByRequests != 630 {
		t.Errorf("agents by requests %d, %d; want 630", p.AgentsByRequests, f.AgentsByRequests)
	}
	// Stagger: the windows admit 24 + 12 + 6 = 42 first calls a second;
	// the tokens 357,000 / 60 = 5,950 a second, over the first call's
	// charge, bind.
	if p.StaggerByRequests != 42 || p.StaggerBinding != Tokens || p.StaggerPerS != math.Floor(5950/(1240+float64(click.MaxTokens))*10)/10 {
		t.Errorf("stagger %v/s (%s; by requests %v, by tokens %v)", p.StaggerPerS, p.StaggerBinding, p.StaggerByRequests, p.StaggerByTokens)
	}
	if f.StaggerPerS != 1.1 || f.StaggerBinding != Tokens {
		t.Errorf("flat stagger %v/s (%s); want 1.1 (5,950 / 5,336), tokens", f.StaggerPerS, f.StaggerBinding)
	}
	if !near(p.Factor, 5336/(1240+float64(click.MaxTokens))) {
		t.Errorf("factor %v", p.Factor)
	}
}

// The article's 68 agents are a click-pick cap of 72: 4 × (1,240 + 72)
// = 5,248 tokens an agent-minute.
func TestArticleTunedFigure(t *testing.T) {
	b, types := load(t, articleConfig+"calltypes:\n  click-pick: {max_tokens: 72}\n")
	p, err := Model(b, types, ClickPick(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.TokensPerAgentMinute != 5_248 || p.Agents != 68 || p.FlatCap.Agents != 16 {
		t.Errorf("%v tokens an agent-minute, %d agents, %d at the flat cap; want 5,248, 68, 16", p.TokensPerAgentMinute, p.Agents, p.FlatCap.Agents)
	}
	if p.StepsPerMinute != DefaultStepsPerMinute || p.PerType[0].PromptTokens != DefaultPromptTokens {
		t.Errorf("defaults: %v steps a minute, prompt %v", p.StepsPerMinute, p.PerType[0].PromptTokens)
	}
}

func TestAgentMix(t *testing.T) {
	b, types := load(t, articleConfig)
	p, err := Model(b, types, Agent(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var perStep, tokens float64
	for _, s := range calltypes.AgentMix() {
		ty, _ := types.Lookup(s.Type)
		perStep += float64(s.Calls) / calltypes.AgentSteps
		tokens += float64(s.Calls) / calltypes.AgentSteps * float64(1240+ty.MaxTokens)
	}
	if !near(p.CallsPerAgentMinute, 4*perStep) || !near(p.TokensPerAgentMinute, 4*tokens) {
		t.Errorf("%v calls, %v tokens an agent-minute; want %v, %v", p.CallsPerAgentMinute, p.TokensPerAgentMinute, 4*perStep, 4*tokens)
	}
	plan, _ := types.Lookup(calltypes.Planning)
	if p.PerType[0].Type != calltypes.Planning || p.FirstCallTokens != float64(1240+plan.MaxTokens) {
		t.Errorf("first call %v tokens (%s); want planning's %d", p.FirstCallTokens, p.PerType[0].Type, 1240+plan.MaxTokens)
	}
}

// Two Standard deployments in one subscription and region are one quota:
// the plan counts it once.
func TestSharedQuotaCountedOnce(t *testing.T) {
	b, types := load(t, `deployments:
  - {name: a, endpoint: "https://a.openai.azure.com", model: gpt-4o, region: eastus, subscription: s1, tpm: 240000}
  - {name: a2, endpoint: "https://a2.openai.azure.com", model: gpt-4o, region: eastus, subscription: s1, tpm: 240000}
  - {name: b, endpoint: "https://b.openai.azure.com", model: gpt-4o, region: westus, subscription: s1, tpm: 60000}
`)
	if len(b.Quotas) != 2 || b.TPM() != 300_000 || b.RPM() != 1_800 || len(b.Quotas[0].Deployments) != 2 {
		t.Fatalf("quotas %+v: want the eastus pair counted once, 300,000 TPM, 1,800 RPM", b.Quotas)
	}
	if b.Margin != 0.85 {
		t.Errorf("margin %v; want the default 0.85", b.Margin)
	}
	p, err := Model(b, types, ClickPick(), Options{FlatCap: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if p.FlatCap.AgentsByTokens != 11 { // 255,000 / 21,344 = 11.9
		t.Errorf("%d agents at the flat cap; want 11", p.FlatCap.AgentsByTokens)
	}
}

func TestRequestsBindOnSmallRPM(t *testing.T) {
	b, types := load(t, `deployments:
  - {name: a, endpoint: "https://a.openai.azure.com", model: gpt-4o, tpm: 240000, rpm: 60, auth: {api_key_env: KEY_A}}
`)
	p, err := Model(b, types, ClickPick(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.AgentsByRequests != 15 || p.Agents != 15 || p.Binding != Requests || p.AgentsByTokens <= 15 {
		t.Errorf("agents %d (%s), by requests %d, by tokens %d; want 15, requests (60 RPM / 4 calls an agent-minute)", p.Agents, p.Binding, p.AgentsByRequests, p.AgentsByTokens)
	}
	// 60 RPM admits one call a second in either window.
	if p.StaggerPerS != 1 || p.StaggerBinding != Window1s {
		t.Errorf("stagger %v (%s); want 1 a second by the 1s window", p.StaggerPerS, p.StaggerBinding)
	}
	// 30 RPM: a 1 s window still admits one, but ten seconds admit 5.
	b.Quotas[0].RPM = 30
	p, err = Model(b, types, ClickPick(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.StaggerPerS != 0.5 || p.StaggerBinding != Window10s {
		t.Errorf("stagger %v (%s); want 0.5 a second by the 10s window", p.StaggerPerS, p.StaggerBinding)
	}
}

func TestParseMix(t *testing.T) {
	for _, s := range []string{"", "click-pick"} {
		if m, err := ParseMix(s); err != nil || len(m.Shares) != 1 || m.Shares[0] != (Share{calltypes.ClickPick, 1}) {
			t.Errorf("ParseMix(%q) = %+v, %v", s, m, err)
		}
	}
	m, err := ParseMix("click-pick, yes-no:0.5")
	if err != nil || len(m.Shares) != 2 || m.Shares[1] != (Share{calltypes.YesNo, 0.5}) {
		t.Errorf("a list: %+v, %v", m, err)
	}
	for _, bad := range []string{"click-pick:0", "yes-no:x", ",", "click-pick:-1"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) took it", bad)
		}
	}
	_, types := load(t, articleConfig)
	if _, err := Model(Budget{Margin: 1, Quotas: []Quota{{TPM: 1, RPM: 1}}}, types, Mix{Shares: []Share{{"click-pik", 1}}}, Options{}); err == nil || !strings.Contains(err.Error(), "click-pik") {
		t.Errorf("an unknown type: %v", err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Leaving the credential out is fine; a missing limit is not.
	p := write("no-tpm.yaml", "deployments:\n  - {name: a, endpoint: \"https://a.openai.azure.com\", model: gpt-4o}\n")
	if _, _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), p+":2: deployments[0].tpm") {
		t.Errorf("no tpm: %v", err)
	}
	p = write("empty.yaml", "margin: 0.9\n")
	if _, _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), "no deployments") {
		t.Errorf("no deployments: %v", err)
	}
	// A file of call types alone loads, and has nothing to plan on.
	p = write("types.yaml", "calltypes:\n  yes-no: {max_tokens: 48}\n")
	f, _, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BudgetOf(&f.Budget); err == nil || !strings.Contains(err.Error(), "no deployments") {
		t.Errorf("types only: %v", err)
	}
}

// A plan reads results and configs, never the packages that make them:
// it must stay linkable without the agent, the model client or Chrome.
func TestImportsStayOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/headroom-agent/headroom/"
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"agent", "llm", "browser"} {
			if dep == mod+bad || strings.HasPrefix(dep, mod+bad+"/") {
				t.Errorf("budget/plan links %s", dep)
			}
		}
	}
}
