package azuresim

import (
	"testing"
)

func reasoningSim(t *testing.T) string {
	t.Helper()
	_, url := serve(t, Config{Deployments: []Deployment{
		{Name: "o4mini", Model: "o4-mini", TPM: 6000000, Reply: "fixed", OutputTokens: 20},
		{Name: "gpt5mini", Model: "gpt-5-mini", TPM: 6000000, Reply: "fixed", OutputTokens: 20,
			ReasoningTokens: map[string]int64{"minimal": 4, "low": 300}},
		{Name: "gpt4o", Model: "gpt-4o", TPM: 6000000, Reply: "fixed", OutputTokens: 20},
	}}, Options{})
	return url
}

func body(fields map[string]any) map[string]any {
	b := map[string]any{"messages": []map[string]string{{"role": "system", "content": "Answer."}, {"role": "user", "content": "Is it done?"}}}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

// A reasoning deployment refuses what only chat models take, with the
// body and parameter Azure names.
func TestReasoningModelsRefuseTheChatShape(t *testing.T) {
	url := reasoningSim(t)
	for _, c := range []struct {
		dep   string
		f     map[string]any
		param string
		code  string
	}{
		{"o4mini", map[string]any{"max_tokens": 64}, "max_tokens", "unsupported_parameter"},
		{"o4mini", map[string]any{"max_completion_tokens": 64, "temperature": 0}, "temperature", "unsupported_value"},
		{"o4mini", map[string]any{"max_completion_tokens": 64, "top_p": 0.5}, "top_p", "unsupported_value"},
		{"o4mini", map[string]any{"max_completion_tokens": 64, "reasoning_effort": "minimal"}, "reasoning_effort", "unsupported_value"},
		{"gpt5mini", map[string]any{"max_tokens": 64, "temperature": 0}, "max_tokens", "unsupported_parameter"},
		{"gpt4o", map[string]any{"max_tokens": 64, "reasoning_effort": "low"}, "reasoning_effort", "unsupported_parameter"},
	} {
		r := post(t, chatURL(url, c.dep), body(c.f))
		if r.status != 400 || r.errorField("param") != c.param || r.errorField("code") != c.code || r.errorField("type") != "invalid_request_error" {
			t.Errorf("%s %v: %d %v, want 400 %s %s", c.dep, c.f, r.status, r.body, c.param, c.code)
		}
	}
	// What each family does take.
	for dep, f := range map[string]map[string]any{
		"o4mini":   {"max_completion_tokens": 600, "temperature": 1, "reasoning_effort": "low"},
		"gpt5mini": {"max_completion_tokens": 600, "reasoning_effort": "minimal"},
		"gpt4o":    {"max_tokens": 64, "temperature": 0},
	} {
		if r := post(t, chatURL(url, dep), body(f)); r.status != 200 {
			t.Errorf("%s %v: %d %v", dep, f, r.status, r.body)
		}
	}
}

// Reasoning is drawn from the cap before the answer: enough cap leaves
// the answer whole, too little cuts it, none left is an empty answer cut
// for length; usage says how many tokens went to reasoning.
func TestReasoningTokensComeOutOfTheCap(t *testing.T) {
	url := reasoningSim(t)
	for _, c := range []struct {
		dep       string
		f         map[string]any
		finish    string
		reasoning float64
		content   bool
	}{
		{"o4mini", map[string]any{"max_completion_tokens": 600, "reasoning_effort": "low"}, "stop", 160, true},
		{"o4mini", map[string]any{"max_completion_tokens": 170, "reasoning_effort": "low"}, "length", 160, true},
		{"o4mini", map[string]any{"max_completion_tokens": 64, "reasoning_effort": "low"}, "length", 64, false},
		{"o4mini", map[string]any{"max_completion_tokens": 2000}, "stop", 640, true}, // medium by default
		{"gpt5mini", map[string]any{"max_completion_tokens": 64, "reasoning_effort": "minimal"}, "stop", 4, true},
		{"gpt5mini", map[string]any{"max_completion_tokens": 200, "reasoning_effort": "low"}, "length", 200, false},
		{"gpt4o", map[string]any{"max_tokens": 64}, "stop", 0, true},
	} {
		r := post(t, chatURL(url, c.dep), body(c.f))
		if r.status != 200 {
			t.Fatalf("%s %v: %d %v", c.dep, c.f, r.status, r.body)
		}
		ch := r.body["choices"].([]any)[0].(map[string]any)
		usage := r.body["usage"].(map[string]any)
		got := usage["completion_tokens_details"].(map[string]any)["reasoning_tokens"].(float64)
		content := ch["message"].(map[string]any)["content"].(string)
		if ch["finish_reason"] != c.finish || got != c.reasoning || (content != "") != c.content {
			t.Errorf("%s %v: finish %v, reasoning %v, content %q; want %s, %v, content %v", c.dep, c.f, ch["finish_reason"], got, content, c.finish, c.reasoning, c.content)
		}
		if cap, ok := c.f["max_completion_tokens"].(int); ok && usage["completion_tokens"].(float64) > float64(cap) {
			t.Errorf("%s: %v completion tokens past the cap of %d", c.dep, usage["completion_tokens"], cap)
		}
	}
}

func TestReasoningTokensConfigIsChecked(t *testing.T) {
	for _, src := range []string{
		"deployments:\n  - {name: a, model: o3, tpm: 1000, reasoning_tokens: {extreme: 5}}\n",
		"deployments:\n  - {name: a, model: o3, tpm: 1000, reasoning_tokens: {low: -1}}\n",
	} {
		if _, err := ParseConfig("sim.yaml", []byte(src)); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
}
