package azuresim

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/llm/tokens"
)

func TestDeploymentsInOnePoolShareOneBudget(t *testing.T) {
	cfg := Config{Deployments: []Deployment{
		// Same subscription, region, type and model: five names, one number.
		{Name: "a", Model: "gpt-4o", Subscription: "sub1", Region: "eastus", TPM: 10000, RPM: 600},
		{Name: "b", Model: "gpt-4o", Subscription: "sub1", Region: "eastus", TPM: 10000, RPM: 600},
		// Another region: a budget of its own.
		{Name: "c", Model: "gpt-4o", Subscription: "sub1", Region: "westus", TPM: 10000, RPM: 600},
	}}
	s, url := serve(t, cfg, Options{})
	clearOfBoundary(time.Minute)
	if r := post(t, chatURL(url, "a"), chatBody("x", 7000)); r.status != 200 {
		t.Fatalf("a: %d", r.status)
	}
	r := post(t, chatURL(url, "b"), chatBody("x", 1))
	if r.status != 200 || r.int("x-ratelimit-remaining-tokens") > 10000-7000 {
		t.Errorf("b after a spent 7,000: status %d, remaining %d; want the pool's remainder", r.status, r.int("x-ratelimit-remaining-tokens"))
	}
	if r := post(t, chatURL(url, "b"), chatBody("x", 5000)); r.status != 429 {
		t.Errorf("b asking for more than the pool has left: %d", r.status)
	}
	if r := post(t, chatURL(url, "c"), chatBody("x", 5000)); r.status != 200 {
		t.Errorf("c, in another region: %d", r.status)
	}
	if st := statsOf(t, s, "a"); st.Pool != "sub1/eastus/standard/gpt-4o" {
		t.Errorf("pool of a = %q", st.Pool)
	}
}

func TestDeclaredPoolCapsItsMembers(t *testing.T) {
	cfg := Config{
		Pools: []Pool{{Name: "shared", TPM: 12000, RPM: 600}},
		Deployments: []Deployment{
			{Name: "a", Pool: "shared", TPM: 10000},
			{Name: "b", Pool: "shared", TPM: 10000},
		},
	}
	_, url := serve(t, cfg, Options{})
	clearOfBoundary(time.Minute)
	if r := post(t, chatURL(url, "a"), chatBody("x", 9000)); r.status != 200 {
		t.Fatalf("a: %d", r.status)
	}
	// b's own limit has room, the pool does not.
	if r := post(t, chatURL(url, "b"), chatBody("x", 4000)); r.status != 429 {
		t.Errorf("b over the pool: %d", r.status)
	}
	if r := post(t, chatURL(url, "b"), chatBody("x", 2000)); r.status != 200 {
		t.Errorf("b within the pool: %d", r.status)
	}
}

func TestAdjustmentLowersTheLimitHeaderAndIsCountedApart(t *testing.T) {
	s, url := serve(t, one("d", 20000), Options{})
	r := post(t, url+"/sim/deployments/d/adjust", `{"factor": 0.25, "duration": "400ms"}`)
	if r.status != 200 || r.body["effective_tpm"] != 5000.0 {
		t.Fatalf("adjust: %d %v", r.status, r.body)
	}
	r = post(t, chatURL(url, "d"), chatBody("x", 8000))
	if r.status != 429 || r.int("x-ratelimit-limit-tokens") != 5000 {
		t.Fatalf("8,000 under a 5,000 lowered limit: %d, limit header %d", r.status, r.int("x-ratelimit-limit-tokens"))
	}
	if !strings.Contains(r.errorField("message").(string), "peak load") {
		t.Errorf("adjustment 429 message: %v", r.errorField("message"))
	}
	st := statsOf(t, s, "d")
	if st.RateLimited.Adjustment != 1 || st.RateLimited.Tokens != 0 || st.EffectiveTPM != 5000 {
		t.Errorf("stats %+v", st)
	}
	time.Sleep(450 * time.Millisecond)
	if r := post(t, chatURL(url, "d"), chatBody("x", 1)); r.int("x-ratelimit-limit-tokens") != 20000 {
		t.Errorf("after the adjustment ends the limit header is %d", r.int("x-ratelimit-limit-tokens"))
	}
	for body, want := range map[string]int{
		`{"factor": 1.5, "duration": "1s"}`: 400,
		`{"factor": 0.5}`:                   400,
		`{"factor": 0.5, "duration": "x"}`:  400,
	} {
		if r := post(t, url+"/sim/deployments/d/adjust", body); r.status != want {
			t.Errorf("adjust %s: %d, want %d", body, r.status, want)
		}
	}
	if r := post(t, url+"/sim/deployments/nope/adjust", `{"factor": 0.5, "duration": "1s"}`); r.status != 404 {
		t.Errorf("adjust an unknown deployment: %d", r.status)
	}
}

func TestScheduledAdjustment(t *testing.T) {
	cfg, err := ParseConfig("sim.yaml", []byte(`
deployments:
  - name: d
    tpm: 30000
    adjustments:
      - {at: 0s, for: 1h, factor: 0.5}
      - {at: 1h, for: 1h, factor: 0.1}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, url := serve(t, cfg, Options{})
	if r := post(t, chatURL(url, "d"), chatBody("x", 1)); r.int("x-ratelimit-limit-tokens") != 15000 {
		t.Errorf("limit header %d during the first adjustment, want 15000", r.int("x-ratelimit-limit-tokens"))
	}
}

func TestRefundPolicies(t *testing.T) {
	for _, policy := range []RefundPolicy{Hold, Refund, "release"} {
		t.Run(string(policy), func(t *testing.T) {
			s, url := serve(t, Config{Refund: policy, Deployments: []Deployment{{Name: "d", TPM: 100000}}}, Options{})
			clearOfBoundary(time.Minute)
			first := post(t, chatURL(url, "d"), chatBody("hello", 1000))
			second := post(t, chatURL(url, "d"), chatBody("", 1))
			// The second call's own charge: 1 token of cap, 1 for its message.
			delta := first.int("x-ratelimit-remaining-tokens") - second.int("x-ratelimit-remaining-tokens") - 2
			used := int64(tokens.Chat([]tokens.Message{{Role: "user", Content: "hello"}}) + tokens.Count("hello"))
			unused := 1000 + 3 - used
			switch policy.normal() { // "release" is Refund's earlier name
			case Hold:
				if delta != 0 {
					t.Errorf("hold gave back %d tokens", -delta)
				}
			case Refund:
				if delta != -unused {
					t.Errorf("refund gave back %d tokens, want the unused %d", -delta, unused)
				}
				if st := statsOf(t, s, "d"); st.TokensRefunded != unused {
					t.Errorf("refunded %d", st.TokensRefunded)
				}
			}
		})
	}
}

func TestFaults(t *testing.T) {
	cfg := Config{Seed: 7, Deployments: []Deployment{
		{Name: "broken", TPM: 60000, Faults: &Faults{ErrorRate: 1}},
		{Name: "dropping", TPM: 60000, Faults: &Faults{DropRate: 1}},
		{Name: "slow", TPM: 60000, Faults: &Faults{Latency: 150 * time.Millisecond, Jitter: 0.1}},
	}}
	s, url := serve(t, cfg, Options{})
	r := post(t, chatURL(url, "broken"), chatBody("x", 100))
	if r.status != 500 || r.errorField("code") != "InternalServerError" {
		t.Errorf("error rate 1: %d %v", r.status, r.body)
	}
	if st := statsOf(t, s, "broken"); st.ServerErrors != 1 || st.TokensCharged != 0 {
		t.Errorf("a 500 before admission charged %d (stats %+v)", st.TokensCharged, st)
	}
	req, _ := http.NewRequest(http.MethodPost, chatURL(url, "dropping"), strings.NewReader(`{"messages":[{"role":"user","content":"x"}],"max_tokens":100}`))
	req.Header.Set("api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Errorf("drop rate 1: got status %d, want a dropped connection", resp.StatusCode)
	} else if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Errorf("drop rate 1: %v", err)
	}
	if st := statsOf(t, s, "dropping"); st.Dropped < 1 || st.TokensCharged == 0 {
		t.Errorf("a dropped call stays charged: %+v", st)
	}
	start := time.Now()
	post(t, chatURL(url, "slow"), chatBody("x", 1))
	if took := time.Since(start); took < 135*time.Millisecond {
		t.Errorf("latency 150ms ± 10%%: answered in %v", took)
	}
}

func TestStatsEndpoint(t *testing.T) {
	_, url := serve(t, Config{Refund: Refund, Deployments: []Deployment{{Name: "d", TPM: 1000}}}, Options{})
	post(t, chatURL(url, "d"), chatBody("x", 10))
	resp, err := http.Get(url + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`"refund":"refund"`, `"deployment":"d"`, `"accepted":1`, `"rate_limited":{"tokens":0,"requests":0,"adjustment":0}`, `"tokens_charged":12`, `"completion_tokens":1`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("stats %s lacks %s", data, want)
		}
	}
}
