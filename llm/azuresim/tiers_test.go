package azuresim

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/llm/tokens"
)

func TestServiceTiers(t *testing.T) {
	cfg := Config{Deployments: []Deployment{
		{Name: "4o", Model: "gpt-4o", TPM: 1_000_000},
		{Name: "41", Model: "gpt-4.1", TPM: 1_000_000},
		{Name: "o4", Model: "o4-mini", TPM: 1_000_000},
		{Name: "4o-flex", Model: "gpt-4o", TPM: 1_000_000, ServiceTiers: []string{"flex"}},
		{Name: "o3-plain", Model: "o3", TPM: 1_000_000, ServiceTiers: []string{"default"}},
	}}
	s, url := serve(t, cfg, Options{})
	for _, c := range []struct {
		dep, tier string
		served    string // "" for a 400
	}{
		{"4o", "", "default"},
		{"4o", "auto", "default"},
		{"4o", "default", "default"},
		{"4o", "flex", ""},
		{"4o", "priority", ""},
		{"41", "priority", "priority"},
		{"41", "flex", ""},
		{"o4", "flex", "flex"},
		{"o4", "priority", "priority"},
		{"4o-flex", "flex", "flex"},
		{"4o-flex", "priority", ""},
		{"o3-plain", "flex", ""},
		{"o3-plain", "auto", "default"},
	} {
		body := map[string]any{"messages": []any{map[string]string{"role": "user", "content": "hi"}}, "max_completion_tokens": 16}
		if c.tier != "" {
			body["service_tier"] = c.tier
		}
		r := post(t, chatURL(url, c.dep), body)
		if c.served == "" {
			msg, _ := r.errorField("message").(string)
			model := cfg.Deployments[slices.IndexFunc(cfg.Deployments, func(d Deployment) bool { return d.Name == c.dep })].Model
			if r.status != 400 || r.errorField("param") != "service_tier" || !strings.Contains(msg, "'"+c.tier+"'") || !strings.Contains(msg, "'"+model+"'") {
				t.Errorf("%s at %s: %d %v; want a 400 naming the tier and the model", c.dep, c.tier, r.status, r.body)
			}
			continue
		}
		if r.status != 200 || r.body["service_tier"] != c.served {
			t.Errorf("%s at %q: %d, served %v; want %s", c.dep, c.tier, r.status, r.body["service_tier"], c.served)
		}
	}
	if r := post(t, chatURL(url, "o4"), map[string]any{"messages": []any{map[string]string{"role": "user", "content": "hi"}}, "service_tier": "scale"}); r.status != 400 || r.errorField("param") != "service_tier" {
		t.Errorf("service_tier scale: %d %v", r.status, r.body)
	}
	if got := statsOf(t, s, "4o").Tiers; got != (ByTier{Default: 3}) {
		t.Errorf("4o's calls by tier: %+v", got)
	}
	if got := statsOf(t, s, "o4").Tiers; got != (ByTier{Flex: 1, Priority: 1}) {
		t.Errorf("o4's calls by tier: %+v", got)
	}
}

// A flex call is served through openai-go and charged against the same
// windows as a default one.
func TestFlexSharesTheDeploymentsWindows(t *testing.T) {
	_, url := serve(t, Config{Deployments: []Deployment{{Name: "o4", Model: "o4-mini", TPM: 1_000_000}}}, Options{})
	client := azureClient(url)
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("click #37")}
	estimate := Estimate([]tokens.Message{{Content: "click #37"}}, 64, 1, 1)
	for i, tier := range []openai.ChatCompletionNewParamsServiceTier{openai.ChatCompletionNewParamsServiceTierFlex, openai.ChatCompletionNewParamsServiceTierDefault} {
		var raw *http.Response
		res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "o4", Messages: msgs, MaxCompletionTokens: openai.Int(64), ServiceTier: tier,
		}, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatal(err)
		}
		if string(res.ServiceTier) != string(tier) {
			t.Errorf("asked for %s, served %s", tier, res.ServiceTier)
		}
		if got, want := raw.Header.Get("x-ratelimit-remaining-tokens"), strconv.FormatInt(1_000_000-int64(i+1)*estimate, 10); got != want {
			t.Errorf("after the %s call: %s tokens remain, want %s", tier, got, want)
		}
	}
}

func TestResponsesTakeServiceTier(t *testing.T) {
	_, url := serve(t, Config{Deployments: []Deployment{{Name: "5", Model: "gpt-5", TPM: 1_000_000}, {Name: "4o", Model: "gpt-4o", TPM: 1_000_000}}}, Options{})
	if r := post(t, url+"/openai/v1/responses", map[string]any{"model": "5", "input": "hi", "service_tier": "priority"}); r.status != 200 || r.body["service_tier"] != "priority" {
		t.Errorf("gpt-5 at priority: %d %v", r.status, r.body["service_tier"])
	}
	if r := post(t, url+"/openai/v1/responses", map[string]any{"model": "4o", "input": "hi", "service_tier": "flex"}); r.status != 400 || r.errorField("param") != "service_tier" {
		t.Errorf("gpt-4o at flex: %d %v", r.status, r.body)
	}
}

func TestTierTableReadsModelNames(t *testing.T) {
	for model, want := range map[string][]string{
		"gpt-4.1-2025-04-14": {tierPriority},
		"GPT-5-mini":         {tierFlex, tierPriority},
		"o3-mini":            nil,
		"gpt-4o":             nil,
		"gpt-5-chat":         nil,
	} {
		if got := modelTiers(model); !slices.Equal(got, want) {
			t.Errorf("%s takes %v, want %v", model, got, want)
		}
	}
}
