package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/llm/azuresim"
)

func TestProbeCompletionReportsUsageEstimateAndHeaders(t *testing.T) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "gpt4o", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60_000},
		{Name: "o4mini", Model: "o4-mini", TPM: 100_000},
	}}, azuresim.Options{APIKeys: []string{"the-right-key"}})
	if err != nil {
		t.Fatal(err)
	}
	ds := probeTarget(t, sim, `deployments:
  - {name: gpt4o, endpoint: ENDPOINT, model: gpt-4o, model_version: "2024-11-20", tpm: 60000, auth: {api_key_env: K}}
  - {name: o4mini, endpoint: ENDPOINT, model: o4-mini, pool: small, tpm: 100000, auth: {api_key_env: K}}
`)
	getenv := func(string) string { return "the-right-key" }
	r, err := ProbeCompletion(context.Background(), ds[0], 2000, ProbeOptions{Getenv: getenv})
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("%+v, %v", r, err)
	}
	// The simulator charges the character rule, as Estimate reserves:
	// the drop from a full window is the estimate.
	if want := Estimate(nil, 2000, 1) + int64(len(CalibrationPrompt)+3)/4 + 1; r.Estimate != want {
		t.Errorf("estimate %d, want %d", r.Estimate, want)
	}
	if got, want := r.Header.Get("x-ratelimit-remaining-tokens"), fmt.Sprint(60_000-r.Estimate); got != want {
		t.Errorf("remaining tokens %s, want %s", got, want)
	}
	if r.TotalTokens <= 0 || r.TotalTokens != r.PromptTokens+r.CompletionTokens || r.TotalTokens > 100 {
		t.Errorf("usage %d + %d = %d", r.PromptTokens, r.CompletionTokens, r.TotalTokens)
	}
	if r.Lag <= 0 || r.Lag > r.Latency {
		t.Errorf("lag %v, latency %v", r.Lag, r.Latency)
	}

	// A reasoning model is asked with max_completion_tokens (max_tokens
	// would be a 400), and its reasoning counts in the usage.
	r, err = ProbeCompletion(context.Background(), ds[1], 2000, ProbeOptions{Getenv: getenv})
	if err != nil || r.Status != http.StatusOK || r.CompletionTokens <= 1 {
		t.Errorf("o4-mini: %+v, %v", r, err)
	}

	// A wrong key is a 401 result, and the key is nowhere in it.
	const canary = "calibrate-canary-0d9e8f7a6b5c"
	r, err = ProbeCompletion(context.Background(), ds[0], 2000, ProbeOptions{Getenv: func(string) string { return canary }})
	if err != nil || r.Status != http.StatusUnauthorized || r.Message == "" {
		t.Errorf("a wrong key: %+v, %v", r, err)
	}
	if s := fmt.Sprintf("%+v %v", r, err); strings.Contains(s, canary) {
		t.Errorf("the key is in the result: %s", s)
	}
	if _, err := ProbeCompletion(context.Background(), ds[0], 2000, ProbeOptions{Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "auth.api_key_env") {
		t.Errorf("no key: %v", err)
	}
}
