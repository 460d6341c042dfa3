package azuresim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/llm/tokens"
)

func TestParseConfigErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct{ src, want string }{
		{"deployments:\n  - name: a\n    tmp: 5\n", `sim.yaml:3: unknown field "tmp"`},
		{"deployments:\n  - name: a\n    tpm: many\n", "sim.yaml:3: "},
		{"deployments:\n  - name: a\n    tpm: 100\n  - name: b\n", "sim.yaml:4: deployments[1].tpm: deployment \"b\" needs a token limit"},
		{"deployments:\n  - name: a\n    tpm: 100\n  - name: a\n    tpm: 5\n", "sim.yaml:4: deployments[1].name: deployment \"a\" is declared twice"},
		{"refund: keep\ndeployments: [{name: a, tpm: 1}]\n", `sim.yaml:1: refund: "keep" is not a refund policy`},
		{"window: 10ms\ndeployments: [{name: a, tpm: 1}]\n", "sim.yaml:1: window: 10ms is too short"},
		{"deployments:\n  - name: a\n    tpm: 1\n    pool: p\n", `sim.yaml:4: deployments[0].pool: pool "p" is not declared`},
		{"deployments:\n  - name: a\n    tpm: 1\n    type: premium\n", `deployments[0].type: "premium" is not a deployment type`},
		{"deployments:\n  - name: a\n    tpm: 1\n    adjustments: [{at: 0s, for: 1m, factor: 2}]\n", "deployments[0].adjustments[0].factor: 2: an adjustment lowers the limit"},
		{"faults: {error_rate: 1.5}\ndeployments: [{name: a, tpm: 1}]\n", "sim.yaml:1: faults.error_rate: 1.5 must be between 0 and 1"},
		{"resources:\n  - name: r\n    path_prefix: r/\n    deployments: [{name: a, tpm: 1}]\n", "sim.yaml:3: resources[0].path_prefix"},
		{"deployments:\n  - name: a\n    tpm: 1\n    request_windows: rolling\n", `sim.yaml:4: deployments[0].request_windows: "rolling" is not a window rule: use fixed or sliding`},
		{"deployments:\n  - name: a\n    tpm: 1\n    token_window: Sliding\n", `sim.yaml:4: deployments[0].token_window: "Sliding" is not a window rule`},
		{"deployments:\n  - name: a\n    tpm: 1\n    estimate_scale: -1\n", "sim.yaml:4: deployments[0].estimate_scale: -1 must be above 0 and at most 100"},
		{"deployments:\n  - name: a\n    tpm: 1\n    estimate_scale: 1e9\n", "sim.yaml:4: deployments[0].estimate_scale: 1e+09 must be above 0"},
		{"deployments:\n  - name: a\n    tpm: 1\n    estimate_scale: .nan\n", "sim.yaml:4: deployments[0].estimate_scale: NaN must be above 0"},
		{"deployments:\n  - name: a\n    tpm: 1\n    estimate_noise: 1.5\n", "sim.yaml:4: deployments[0].estimate_noise: 1.5 must be between 0 and 1"},
		{"deployments:\n  - name: a\n    tpm: 1\n    dispatch_delay: -5ms\n", "sim.yaml:4: deployments[0].dispatch_delay: must not be negative"},
		{"deployments:\n  - name: a\n    tpm: 1\n    dispatch_delay: soon\n", `invalid duration "soon"`},
		{"deployments:\n  - name: a\n    tpm: 1\n    dispatch_jitter: 2\n", "sim.yaml:4: deployments[0].dispatch_jitter: 2 must be between 0 and 1"},
		{"deployments:\n  - name: a\n    tpm: 1\n    dispatch_tail: 5\n", "sim.yaml:4: deployments[0].dispatch_tail: 5 must be between 0 and 3"},
		{"deployments:\n  - name: a\n    tpm: 1\n    dispatch_max: -1s\n", "sim.yaml:4: deployments[0].dispatch_max: must not be negative"},
		{"pools: [{name: p, tpm: 9}]\ndeployments:\n  - {name: a, tpm: 1, pool: p, request_windows: sliding}\n  - {name: b, tpm: 1, pool: p}\n",
			`sim.yaml:4: deployments[1].request_windows: deployment "b" shares quota pool "p" with "a", which counts its request windows sliding`},
		{"deployments:\n  - {name: a, tpm: 1, subscription: s, region: r, token_window: sliding}\n  - name: b\n    tpm: 1\n    subscription: s\n    region: r\n    token_window: fixed\n",
			`sim.yaml:7: deployments[1].token_window: deployment "b" shares quota pool "s/r/standard/" with "a"`},
		{"deployments:\n  - name: a\n    tpm: 1\n    image_admission: -5\n", "sim.yaml:4: deployments[0].image_admission: must not be negative"},
		{"deployments:\n  - name: a\n    tpm: 1\n    cache_idle: -1m\n", "sim.yaml:4: deployments[0].cache_idle: must not be negative"},
		{"deployments:\n  - name: a\n    tpm: 1\n    service_tiers: [flex, scale]\n", `deployments[0].service_tiers[1]: "scale" is not a service tier`},
		{"window: 1m\n", "deployments: no deployments"},
		{"deployments: [\n", "sim.yaml:1: "},
	}
	for _, c := range cases {
		_, err := ParseConfig("sim.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseConfig(%q) = %v, want an error with %q", c.src, err, c.want)
		}
	}
}

func TestParseConfigFull(t *testing.T) {
	cfg, err := ParseConfig("sim.yaml", []byte(`
window: 6s
refund: refund
seed: 3
faults: {latency: 20ms, latency_per_token: 1ms, jitter: 0.2, error_rate: 0.01, drop_rate: 0.001}
pools: [{name: east, tpm: 200000}]
deployments:
  - name: gpt4o
    model: gpt-4o
    model_version: "2024-11-20"
    tpm: 150000
    pool: east
    reply: fixed
    output_tokens: 30
  - name: o3mini
    model: o3-mini
    tpm: 50000
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Window != 6*time.Second || cfg.Refund != Refund || cfg.Faults.Latency != 20*time.Millisecond || cfg.Deployments[0].OutputTokens != 30 {
		t.Errorf("decoded %+v", cfg)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Stats().Deployments
	if st[0].RPM != 900 || st[1].RPM != 5 || st[0].Pool != "east" {
		t.Errorf("default RPMs from quota units: %+v", st)
	}
}

func TestParseConfigHiddenRules(t *testing.T) {
	cfg, err := ParseConfig("sim.yaml", []byte(`
deployments:
  - name: d
    tpm: 60000
    request_windows: sliding
    token_window: fixed
    estimate_scale: 1.1
    estimate_noise: 0.05
    dispatch_delay: 20ms
    dispatch_jitter: 0.5
    image_admission: 1200
    cache_idle: 10m
    service_tiers: [flex]
  - {name: e, tpm: 60000, cache_off: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Deployments[0]
	if d.RequestWindows != SlidingWindow || d.TokenWindow != FixedWindow || d.EstimateScale != 1.1 || d.EstimateNoise != 0.05 || d.DispatchDelay != 20*time.Millisecond || d.DispatchJitter != 0.5 {
		t.Errorf("decoded %+v", d)
	}
	if d.ImageAdmission != 1200 || d.CacheIdle != 10*time.Minute || len(d.ServiceTiers) != 1 || d.ServiceTiers[0] != "flex" || !cfg.Deployments[1].CacheOff {
		t.Errorf("decoded image_admission %d, cache_idle %v, service_tiers %q, cache_off %v", d.ImageAdmission, d.CacheIdle, d.ServiceTiers, cfg.Deployments[1].CacheOff)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, off := s.lookup("default", "d").cache, s.lookup("default", "e").cache; c == nil || c.idle != 10*time.Minute || off != nil {
		t.Errorf("prompt caches: d %+v, e %+v", c, off)
	}
	own, plain := s.lookup("default", "d").own, s.lookup("default", "e").own
	if !own.req1.sliding || !own.req10.sliding || own.tokens.sliding || plain.req1.sliding || plain.tokens.sliding {
		t.Errorf("windows: d %v/%v/%v, e %v/%v", own.req1.sliding, own.req10.sliding, own.tokens.sliding, plain.req1.sliding, plain.tokens.sliding)
	}
}

func TestDefaultRPM(t *testing.T) {
	for _, c := range []struct {
		model string
		tpm   int64
		want  int64
	}{
		{"gpt-4o", 60000, 360},
		{"gpt-4.1-mini", 1000, 6},
		{"", 240000, 1440},
		{"o1", 60000, 10},
		{"o1-mini", 100000, 10},
		{"o3", 50000, 50},
		{"o4-mini", 20000, 20},
		{"o3-mini", 100000, 10},
		{"o3-pro", 5000, 1},
	} {
		if got := DefaultRPM(c.model, c.tpm); got != c.want {
			t.Errorf("DefaultRPM(%q, %d) = %d, want %d", c.model, c.tpm, got, c.want)
		}
	}
}

func TestParseDeploymentFlag(t *testing.T) {
	d, err := ParseDeploymentFlag("gpt4o:60000")
	if err != nil || d.Name != "gpt4o" || d.TPM != 60000 || d.RPM != 0 {
		t.Errorf("gpt4o:60000 = %+v, %v", d, err)
	}
	d, err = ParseDeploymentFlag("gpt4o:60000:100")
	if err != nil || d.RPM != 100 {
		t.Errorf("gpt4o:60000:100 = %+v, %v", d, err)
	}
	for _, bad := range []string{"gpt4o", ":100", "gpt4o:", "gpt4o:0", "gpt4o:-5", "gpt4o:1e5", "a:1:2:3", "gpt4o:99999999999999999999"} {
		if _, err := ParseDeploymentFlag(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseDeploymentFlag(%q) = %v, want an error naming it", bad, err)
		}
	}
}

func TestFixedAnswersHaveTheRequestedLength(t *testing.T) {
	for n := 1; n <= 200; n++ {
		if got := tokens.Count(Fixed{}.Reply(Request{OutputTokens: n})); got != n {
			t.Fatalf("Fixed with %d tokens made %d", n, got)
		}
	}
}

func TestUnknownReplyBehaviour(t *testing.T) {
	_, err := New(Config{Deployments: []Deployment{{Name: "d", TPM: 1, Reply: "genius"}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), `"genius"`) {
		t.Errorf("unknown reply: %v", err)
	}
	_, err = New(Config{Deployments: []Deployment{{Name: "d", TPM: 1, Reply: "genius"}}}, Options{Models: map[string]Model{"genius": Echo{}}})
	if err != nil {
		t.Errorf("registered reply: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("deployments:\n  - name: a\n    tpm: 5\n"))
	f.Add([]byte("pools: [{name: p, tpm: 10}]\ndeployments: [{name: a, tpm: 1, pool: p, adjustments: [{at: 1s, for: 1s, factor: 0.5}]}]\n"))
	f.Add([]byte("resources: [{name: r, path_prefix: /r, deployments: [{name: a, tpm: 1}]}]\n"))
	f.Add([]byte("deployments: [{name: a, tpm: 5, request_windows: sliding, token_window: sliding, estimate_scale: 1.1, estimate_noise: 0.05, dispatch_delay: 20ms, dispatch_jitter: 0.5}]\n"))
	f.Add([]byte("pools: [{name: p, tpm: 10}]\ndeployments: [{name: a, tpm: 1, pool: p, token_window: sliding}, {name: b, tpm: 1, pool: p, token_window: fixed}]\n"))
	f.Add([]byte("deployments: [{name: a, tpm: 1, estimate_scale: -0.0, estimate_noise: 1, dispatch_delay: 0s}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What parses must build.
		if _, err := New(cfg, Options{}); err != nil && !strings.Contains(err.Error(), "reply") {
			t.Fatalf("parsed config does not build: %v", err)
		}
	})
}

func FuzzParseDeploymentFlag(f *testing.F) {
	for _, s := range []string{"gpt4o:60000", "a:1:2", "::", "x:9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDeploymentFlag(s)
		if err == nil && (d.Name == "" || d.TPM <= 0 || d.RPM < 0) {
			t.Fatalf("%q parsed to %+v", s, d)
		}
	})
}

// Any body gets a JSON answer with an Azure status, never a panic.
func FuzzChatBody(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"n":2,"best_of":3}`)
	f.Add(`{"messages":[]}`)
	f.Add(`{"messages":[{"role":"user","content":{}}]}`)
	f.Add(`[`)
	s, err := New(Config{Deployments: []Deployment{{Name: "d", TPM: 1 << 40, RPM: 1 << 40}}}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/openai/deployments/d/chat/completions?api-version=1", strings.NewReader(body))
		req.Header.Set("api-key", "k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 400, 429:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
		if !strings.HasPrefix(w.Body.String(), "{") {
			t.Fatalf("non-JSON answer %q", w.Body.String())
		}
	})
}
