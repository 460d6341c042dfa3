package llm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// probeTarget serves sim over HTTP and returns the config's deployments,
// validated, with ENDPOINT in yaml replaced by the server's URL.
// parseConfig reads a config's budget part as package config reads the
// whole file.
func parseConfig(name string, data []byte) (*budget.Config, []budget.Warning, error) {
	f, ws, err := config.Parse(name, data)
	if err != nil {
		return nil, ws, err
	}
	return &f.Budget, ws, nil
}

func probeTarget(t *testing.T, sim *azuresim.Sim, yaml string) []budget.Deployment {
	t.Helper()
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	cfg, _, err := parseConfig("headroom.yaml", []byte(strings.ReplaceAll(yaml, "ENDPOINT", ts.URL)))
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

// fakeEntra hands out one token, as an Entra ID credential would.
type fakeEntra struct{ token string }

func (f fakeEntra) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: f.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestProbeKeepsTheEntraTokenOut: a probe with Entra ID goes the way the
// calls go, its token registered as a secret, so an endpoint that echoes
// the token back (in its error, its headers) gets it into no output.
func TestProbeKeepsTheEntraTokenOut(t *testing.T) {
	const token = "entra-canary-token-5d1b7e93a04c"
	var got atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Ratelimit-Remaining-Tokens", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error": {"code": "InvalidToken", "message": "token %s is not valid for this resource"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(ts.Close)
	cfg, _, err := parseConfig("headroom.yaml", []byte("deployments:\n  - {name: d, endpoint: "+ts.URL+", model: gpt-4o, tpm: 60000, auth: {entra: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Probe(context.Background(), cfg.Deployments[0], ProbeOptions{Credential: fakeEntra{token}})
	if s, _ := got.Load().(string); !strings.Contains(s, token) {
		t.Fatalf("the endpoint got Authorization %q, want the credential's token", s)
	}
	if r.Status != http.StatusUnauthorized {
		t.Errorf("status %d, want the endpoint's 401 (%v)", r.Status, err)
	}
	if s := fmt.Sprintf("%+v %v", r, err); strings.Contains(s, token) {
		t.Errorf("the token is in the probe's output: %s", s)
	}
}
