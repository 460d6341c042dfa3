package azuresim

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/llm/tokens"
)

func one(name string, tpm int64) Config {
	return Config{Deployments: []Deployment{{Name: name, TPM: tpm}}}
}

func TestAzureClientGetsCompletion(t *testing.T) {
	_, url := serve(t, Config{Deployments: []Deployment{{Name: "gpt4o", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60000}}}, Options{})
	client := openai.NewClient(
		azure.WithEndpoint(url, "2024-10-21"),
		azure.WithAPIKey("k"),
		azure.WithUnsafeAllowHTTP(),
		option.WithMaxRetries(0),
	)
	var raw *http.Response
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("click #37")}
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt4o", Messages: msgs, MaxTokens: openai.Int(48), N: openai.Int(1),
	}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; got != "click #37" {
		t.Errorf("echo answer = %q", got)
	}
	if res.Model != "gpt-4o-2024-11-20" || res.Choices[0].FinishReason != "stop" {
		t.Errorf("model %q, finish %q", res.Model, res.Choices[0].FinishReason)
	}
	want := tokens.Chat([]tokens.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "click #37"}})
	if res.Usage.PromptTokens != int64(want) || res.Usage.CompletionTokens != int64(tokens.Count("click #37")) {
		t.Errorf("usage = %+v, want prompt %d", res.Usage, want)
	}
	estimate := Estimate([]tokens.Message{{Content: "Be brief."}, {Content: "click #37"}}, 48, 1, 1)
	for h, v := range map[string]string{
		"x-ratelimit-limit-tokens":       "60000",
		"x-ratelimit-remaining-tokens":   strconv.FormatInt(60000-estimate, 10),
		"x-ratelimit-limit-requests":     "60", // 360 RPM / 6: the 10 s window
		"x-ratelimit-remaining-requests": "59",
	} {
		if got := raw.Header.Get(h); got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
	for _, h := range []string{"x-ratelimit-reset-tokens", "x-ratelimit-reset-requests", "x-request-id"} {
		if raw.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
}

func TestV1RouteTakesDeploymentFromModelAndBearerKey(t *testing.T) {
	_, url := serve(t, one("mini", 30000), Options{APIKeys: []string{"secret"}})
	client := openai.NewClient(option.WithBaseURL(url+"/openai/v1/"), option.WithAPIKey("secret"), option.WithMaxRetries(0))
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, MaxTokens: openai.Int(5),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hi" {
		t.Errorf("answer %q", res.Choices[0].Message.Content)
	}
	if r := post(t, url+"/openai/v1/chat/completions", map[string]any{"model": "nope", "messages": []any{map[string]string{"role": "user", "content": "x"}}}, "Authorization", "Bearer secret"); r.status != 404 || r.errorField("code") != "DeploymentNotFound" {
		t.Errorf("unknown deployment: %d %v", r.status, r.body)
	}
}

func TestAuth(t *testing.T) {
	_, open := serve(t, one("d", 60000), Options{})
	_, locked := serve(t, one("d", 60000), Options{APIKeys: []string{"k1", "k2"}})
	body := chatBody("hello", 5)
	cases := []struct {
		name   string
		base   string
		header []string
		want   int
	}{
		{"no key", open, []string{"x", "y"}, 401},
		{"any key when none configured", open, []string{"api-key", "whatever"}, 200},
		{"bearer", open, []string{"Authorization", "Bearer abc"}, 200},
		{"empty bearer", open, []string{"Authorization", "Bearer "}, 401},
		{"wrong key", locked, []string{"api-key", "k3"}, 401},
		{"configured key", locked, []string{"api-key", "k2"}, 200},
		{"configured bearer", locked, []string{"Authorization", "Bearer k1"}, 200},
	}
	for _, c := range cases {
		r := post(t, chatURL(c.base, "d"), body, c.header...)
		if r.status != c.want {
			t.Errorf("%s: status %d, want %d", c.name, r.status, c.want)
		}
		if c.want == 401 && (r.errorField("code") != "401" || !strings.Contains(r.errorField("message").(string), "Access denied")) {
			t.Errorf("%s: body %v is not Azure's 401", c.name, r.body)
		}
	}
}

func TestEstimateIsChargedAtAdmission(t *testing.T) {
	cfg := Config{Deployments: []Deployment{{Name: "d", TPM: 1_000_000}, {Name: "small-default", TPM: 1_000_000, DefaultMaxTokens: 640}}}
	_, url := serve(t, cfg, Options{})
	prompt := strings.Repeat("x", 28) // 7 + 1 per message
	cases := []struct {
		name string
		dep  string
		body map[string]any
		want int64
	}{
		{"max_tokens", "d", map[string]any{"max_tokens": 4096}, 8 + 4096},
		{"max_completion_tokens", "d", map[string]any{"max_completion_tokens": 100}, 8 + 100},
		{"n multiplies", "d", map[string]any{"max_tokens": 10, "n": 3}, 8 + 30},
		{"best_of wins over n", "d", map[string]any{"max_tokens": 10, "n": 2, "best_of": 5}, 8 + 50},
		{"no cap: the default", "d", map[string]any{}, 8 + 4096},
		{"no cap: the deployment's default", "small-default", map[string]any{}, 8 + 640},
	}
	for _, c := range cases {
		clearOfBoundary(time.Minute)
		b := chatBody(prompt, 0)
		for k, v := range c.body {
			b[k] = v
		}
		before := post(t, chatURL(url, c.dep), chatBody("", 1)).int("x-ratelimit-remaining-tokens")
		r := post(t, chatURL(url, c.dep), b)
		if r.status != 200 {
			t.Fatalf("%s: status %d %v", c.name, r.status, r.body)
		}
		if got := before - r.int("x-ratelimit-remaining-tokens"); got != c.want {
			t.Errorf("%s: charged %d, want %d", c.name, got, c.want)
		}
	}
}

func TestTokenLimitRefusesWithRetryAfter(t *testing.T) {
	// A 1.2 s minute: the test waits out a window.
	s, url := serve(t, Config{Window: 1200 * time.Millisecond, Deployments: []Deployment{{Name: "d", TPM: 10000, RPM: 6000}}}, Options{})
	untilBoundary(1200 * time.Millisecond)
	if r := post(t, chatURL(url, "d"), chatBody("a", 6000)); r.status != 200 {
		t.Fatalf("first call: %d %v", r.status, r.body)
	}
	r := post(t, chatURL(url, "d"), chatBody("a", 6000))
	if r.status != 429 {
		t.Fatalf("second call over the limit: status %d", r.status)
	}
	ms := r.int("retry-after-ms")
	if ms <= 0 || ms > 1200 || r.int("retry-after") < 1 {
		t.Errorf("retry-after-ms %d, retry-after %d: want the time to the window's end", ms, r.int("retry-after"))
	}
	if r.errorField("code") != "429" || !strings.Contains(r.errorField("message").(string), "token rate limit") {
		t.Errorf("429 body %v", r.body)
	}
	if rem := r.int("x-ratelimit-remaining-tokens"); rem < 0 || rem >= 6000 {
		t.Errorf("remaining tokens on the 429 = %d", rem)
	}
	if st := statsOf(t, s, "d"); st.RateLimited.Tokens != 1 || st.Accepted != 1 {
		t.Errorf("stats %+v", st)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	if r := post(t, chatURL(url, "d"), chatBody("a", 6000)); r.status != 200 {
		t.Errorf("after retry-after-ms: status %d", r.status)
	}
}

func TestOneSecondWindowRefusesABurst(t *testing.T) {
	s, url := serve(t, one("gpt4o", 60000), Options{}) // 360 RPM: 6 a second
	untilBoundary(time.Second)
	var mu sync.Mutex
	codes := map[int]int{}
	var waits []int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			r := post(t, chatURL(url, "gpt4o"), chatBody("hi", 5))
			mu.Lock()
			defer mu.Unlock()
			codes[r.status]++
			if r.status == 429 {
				waits = append(waits, r.int("retry-after-ms"))
				if r.int("x-ratelimit-remaining-requests") != 0 || !strings.Contains(r.errorField("message").(string), "call rate limit") {
					t.Errorf("request 429: remaining %q, body %v", r.header.Get("x-ratelimit-remaining-requests"), r.body)
				}
			}
		})
	}
	wg.Wait()
	if codes[200] != 6 || codes[429] != 14 {
		t.Fatalf("20 at once on 360 RPM: %v, want 6 admitted and 14 refused", codes)
	}
	for _, w := range waits {
		if w <= 0 || w > 1000 {
			t.Errorf("retry-after-ms %d: want the rest of the 1 s window", w)
		}
	}
	if st := statsOf(t, s, "gpt4o"); st.RateLimited.Requests != 14 {
		t.Errorf("stats: %+v", st.RateLimited)
	}
}

func TestTenSecondWindowBindsBelowSixtyRPM(t *testing.T) {
	// 30 RPM allows 1 a second but only 5 in ten. A 6 s minute makes those
	// windows 100 ms and 1 s.
	_, url := serve(t, Config{Window: 6 * time.Second, Deployments: []Deployment{{Name: "d", TPM: 100000, RPM: 30}}}, Options{})
	untilBoundary(time.Second)
	admitted := 0
	for range 40 {
		r := post(t, chatURL(url, "d"), chatBody("x", 1))
		if r.status == 200 {
			admitted++
			continue
		}
		wait := time.Duration(r.int("retry-after-ms")) * time.Millisecond
		if wait > 100*time.Millisecond {
			// Refused by the 10 s window, not the 1 s one.
			if admitted > 5 || r.int("x-ratelimit-limit-requests") != 5 {
				t.Fatalf("admitted %d before the 10 s window refused; limit header %d", admitted, r.int("x-ratelimit-limit-requests"))
			}
			return
		}
		time.Sleep(wait)
	}
	t.Fatalf("the 10 s window never refused (admitted %d)", admitted)
}

func TestBadRequests(t *testing.T) {
	_, url := serve(t, one("d", 60000), Options{})
	cases := []struct {
		name  string
		url   string
		body  any
		want  int
		param any
	}{
		{"not JSON", chatURL(url, "d"), `{"messages": [`, 400, nil},
		{"wrong type", chatURL(url, "d"), `{"messages": "hi"}`, 400, "messages"},
		{"no messages", chatURL(url, "d"), `{}`, 400, "messages"},
		{"n of zero", chatURL(url, "d"), map[string]any{"messages": []any{map[string]string{"role": "user", "content": "x"}}, "n": 0}, 400, "n"},
		{"bad role", chatURL(url, "d"), `{"messages":[{"role":"robot","content":"x"}]}`, 400, "messages[0].role"},
		{"streaming", chatURL(url, "d"), `{"messages":[{"role":"user","content":"x"}],"stream":true}`, 400, "stream"},
		{"unknown deployment", chatURL(url, "nope"), chatBody("x", 1), 404, nil},
		{"no api-version", url + "/openai/deployments/d/chat/completions", chatBody("x", 1), 404, nil},
		{"unknown path", url + "/openai/whatever", chatBody("x", 1), 404, nil},
	}
	for _, c := range cases {
		r := post(t, c.url, c.body)
		if r.status != c.want || r.body["error"] == nil {
			t.Errorf("%s: %d %v, want %d with an error body", c.name, r.status, r.body, c.want)
			continue
		}
		if c.param != nil && r.errorField("param") != c.param {
			t.Errorf("%s: param %v, want %v", c.name, r.errorField("param"), c.param)
		}
	}
}

func TestFixedReplyIsCutAtTheCap(t *testing.T) {
	s, url := serve(t, Config{Deployments: []Deployment{{Name: "d", TPM: 100000, Reply: "fixed", OutputTokens: 50}}}, Options{})
	r := post(t, chatURL(url, "d"), chatBody("go", 10))
	choice := r.body["choices"].([]any)[0].(map[string]any)
	usage := r.body["usage"].(map[string]any)
	if choice["finish_reason"] != "length" || usage["completion_tokens"] != 10.0 {
		t.Errorf("cap 10 on a 50-token answer: finish %v, completion %v", choice["finish_reason"], usage["completion_tokens"])
	}
	if text := choice["message"].(map[string]any)["content"].(string); tokens.Count(text) > 10 {
		t.Errorf("answer has %d tokens, over the cap", tokens.Count(text))
	}
	r = post(t, chatURL(url, "d"), chatBody("go", 100))
	choice = r.body["choices"].([]any)[0].(map[string]any)
	if choice["finish_reason"] != "stop" || r.body["usage"].(map[string]any)["completion_tokens"] != 50.0 {
		t.Errorf("cap 100 on a 50-token answer: %v %v", choice["finish_reason"], r.body["usage"])
	}
	if st := statsOf(t, s, "d"); st.CompletionTokens != 60 || st.Accepted != 2 {
		t.Errorf("stats %+v", st)
	}
}
