package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// probeTarget serves sim over HTTP and returns the config's deployments,
// validated, with ENDPOINT in yaml replaced by the server's URL.
func probeTarget(t *testing.T, sim *azuresim.Sim, yaml string) []budget.Deployment {
	t.Helper()
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	cfg, _, err := budget.ParseConfig("headroom.yaml", []byte(strings.ReplaceAll(yaml, "ENDPOINT", ts.URL)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Deployments
}

func TestProbeReportsLimitsAndModel(t *testing.T) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "gpt4o", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60_000},
		{Name: "o4mini", Model: "o4-mini", TPM: 100_000},
	}}, azuresim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := probeTarget(t, sim, `deployments:
  - {name: gpt4o, endpoint: ENDPOINT, model: gpt-4o, model_version: "2024-11-20", tpm: 60000, auth: {api_key_env: K}}
  - {name: o4mini, endpoint: ENDPOINT, model: o4-mini, pool: small, tpm: 100000, auth: {api_key_env: K}}
`)
	getenv := func(string) string { return "probe-test-key" }
	r, err := Probe(context.Background(), ds[0], ProbeOptions{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusOK || r.Model != "gpt-4o-2024-11-20" {
		t.Errorf("status %d, model %q", r.Status, r.Model)
	}
	// 360 RPM: the 10-second window's 60, as Azure reports it.
	if got := r.Header.Get("x-ratelimit-limit-tokens"); got != "60000" {
		t.Errorf("x-ratelimit-limit-tokens %q", got)
	}
	if got := r.Header.Get("x-ratelimit-limit-requests"); got != "60" {
		t.Errorf("x-ratelimit-limit-requests %q", got)
	}
	if r.Header.Get("x-ratelimit-remaining-tokens") == "" || r.Header.Get("x-ratelimit-remaining-requests") == "" {
		t.Errorf("remaining headers missing: %v", r.Header)
	}
	for k := range r.Header {
		if !strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			t.Errorf("header %s kept: only rate-limit headers belong in a probe's result", k)
		}
	}

	// A reasoning model refuses max_tokens with a 400: the probe asks in
	// its terms.
	r, err = Probe(context.Background(), ds[1], ProbeOptions{Getenv: getenv})
	if err != nil || r.Status != http.StatusOK || r.Model != "o4-mini" {
		t.Errorf("o4-mini: %+v, %v", r, err)
	}

	// One tiny request each: the prompt estimate and a cap of one token.
	for _, st := range sim.Stats().Deployments {
		if st.Accepted != 1 || st.TokensCharged > 10 {
			t.Errorf("%s: %d calls, %d tokens charged", st.Deployment, st.Accepted, st.TokensCharged)
		}
	}
}

func TestProbeKeepsTheKeyOut(t *testing.T) {
	const canary = "probe-canary-7f3a9c1e5b2d4f6a8c0e"
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{Name: "d", Model: "gpt-4o", TPM: 60_000}}},
		azuresim.Options{APIKeys: []string{"the-right-key"}})
	if err != nil {
		t.Fatal(err)
	}
	ds := probeTarget(t, sim, "deployments:\n  - {name: d, endpoint: ENDPOINT, model: gpt-4o, tpm: 60000, auth: {api_key_env: PROBE_KEY}}\n")
	r, err := Probe(context.Background(), ds[0], ProbeOptions{Getenv: func(string) string { return canary }})
	if err != nil || r.Status != http.StatusUnauthorized || r.Message == "" {
		t.Errorf("a wrong key: %+v, %v", r, err)
	}
	if s := fmt.Sprintf("%+v %v", r, err); strings.Contains(s, canary) {
		t.Errorf("the key is in the result: %s", s)
	}

	_, err = Probe(context.Background(), ds[0], ProbeOptions{Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "PROBE_KEY") {
		t.Errorf("no key: %v", err)
	}

	// Nothing listens: an error, no status, and still no key.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	d := ds[0]
	d.Endpoint = "http://" + gone
	r, err = Probe(context.Background(), d, ProbeOptions{Getenv: func(string) string { return canary }})
	if err == nil || r.Status != 0 || strings.Contains(err.Error(), canary) {
		t.Errorf("nothing listening: %+v, %v", r, err)
	}
}
