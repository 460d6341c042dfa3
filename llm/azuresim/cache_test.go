package azuresim

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// serveClocked is serve with the prompt cache's clock under the test's
// hand: advance moves it on.
func serveClocked(t *testing.T, cfg Config) (s *Sim, url string, advance func(time.Duration)) {
	t.Helper()
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var skew atomic.Int64
	s.clock = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts.URL, func(d time.Duration) { skew.Add(int64(d)) }
}

// longPrompt is a system prompt of about n tokens.
func longPrompt(n int) string {
	var b strings.Builder
	for i := 0; tokens.Count(b.String()) < n; i++ {
		fmt.Fprintf(&b, "Rule %d: answer with the element's index. ", i)
	}
	return b.String()
}

// cached sends one chat call and returns its prompt and cached tokens.
func cached(t *testing.T, client openai.Client, dep string, msgs ...openai.ChatCompletionMessageParamUnion) (prompt, hit int64) {
	t.Helper()
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: dep, Messages: msgs, MaxTokens: openai.Int(16),
		PromptCacheKey: openai.String("agent-7"),
	})
	if err != nil {
		t.Fatalf("%s: %v", dep, err)
	}
	return res.Usage.PromptTokens, res.Usage.PromptTokensDetails.CachedTokens
}

func TestPromptCacheServesALongSharedPrefix(t *testing.T) {
	cfg := Config{Deployments: []Deployment{
		{Name: "a", Model: "gpt-4o", TPM: 10_000_000},
		{Name: "b", Model: "gpt-4o", TPM: 10_000_000},
		{Name: "off", Model: "gpt-4o", TPM: 10_000_000, CacheOff: true},
		{Name: "brief", Model: "gpt-4o", TPM: 10_000_000, CacheIdle: time.Minute},
	}}
	s, url, advance := serveClocked(t, cfg)
	client := azureClient(url)
	system := openai.SystemMessage(longPrompt(2000))
	ask := openai.UserMessage("click #37")

	prompt, hit := cached(t, client, "a", system, ask)
	if prompt < 2000 || hit != 0 {
		t.Fatalf("first call: %d prompt tokens, %d cached; want about 2,000 and none", prompt, hit)
	}
	// The longest block boundary below the prompt's length: its last
	// token is read afresh.
	want := cacheMin + (prompt-1-cacheMin)/cacheBlock*cacheBlock
	if _, hit = cached(t, client, "a", system, ask); hit != want {
		t.Errorf("second call: %d cached, want %d (a multiple of 128, at least 1,024, below %d)", hit, want, prompt)
	}
	if _, hit = cached(t, client, "a", system, openai.UserMessage("click #38")); hit < cacheMin || hit%cacheBlock != 0 {
		t.Errorf("another question after the same system prompt: %d cached, want the system prompt's blocks", hit)
	}
	if _, hit = cached(t, client, "b", system, ask); hit != 0 {
		t.Errorf("another deployment: %d cached, want none (each keeps its own cache)", hit)
	}
	if st := statsOf(t, s, "a"); st.CachedTokens < 2*cacheMin {
		t.Errorf("stats: %d cached tokens on a", st.CachedTokens)
	}

	advance(DefaultCacheIdle)
	if _, hit = cached(t, client, "a", system, ask); hit != 0 {
		t.Errorf("after %v idle: %d cached, want none", DefaultCacheIdle, hit)
	}
	if _, hit = cached(t, client, "a", system, ask); hit != want {
		t.Errorf("right after: %d cached, want %d again", hit, want)
	}

	cached(t, client, "brief", system, ask)
	advance(time.Minute - time.Second)
	if _, hit = cached(t, client, "brief", system, ask); hit != want {
		t.Errorf("cache_idle 1m, 59s later: %d cached, want %d", hit, want)
	}
	advance(time.Minute)
	if _, hit = cached(t, client, "brief", system, ask); hit != 0 {
		t.Errorf("cache_idle 1m, a minute later: %d cached, want none", hit)
	}

	for range 2 {
		if _, hit = cached(t, client, "off", system, ask); hit != 0 {
			t.Errorf("cache_off: %d cached", hit)
		}
	}
	short := openai.SystemMessage(longPrompt(900))
	for range 3 {
		if p, hit := cached(t, client, "a", short, ask); hit != 0 || p >= cacheMin {
			t.Errorf("a %d-token prompt: %d cached, want none below 1,024", p, hit)
		}
	}
}

// An image is part of the prefix: the same one is cached, another is not.
func TestPromptCacheKeysOnImages(t *testing.T) {
	_, url, _ := serveClocked(t, Config{Deployments: []Deployment{{Name: "mini", Model: "gpt-4o-mini", TPM: 10_000_000}}})
	client := azureClient(url)
	look := func(shade uint8) openai.ChatCompletionMessageParamUnion {
		return openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What is on the screen?"),
			imagePart(dataURL(t, "png", 64, 64, shade), "low"), // 2,833 tokens
		})
	}
	prompt, _ := cached(t, client, "mini", look(0))
	if _, hit := cached(t, client, "mini", look(0)); hit != cacheMin+(prompt-1-cacheMin)/cacheBlock*cacheBlock {
		t.Errorf("the same image again: %d of %d cached", hit, prompt)
	}
	if _, hit := cached(t, client, "mini", look(9)); hit != 0 {
		t.Errorf("another image: %d cached, want none (the image starts before token 1,024)", hit)
	}
}

func TestResponsesReportCachedTokens(t *testing.T) {
	_, url, _ := serveClocked(t, Config{Deployments: []Deployment{{Name: "d", Model: "gpt-4o", TPM: 10_000_000}}})
	body := map[string]any{"model": "d", "instructions": longPrompt(1500), "input": "hi", "store": false, "prompt_cache_key": "k"}
	var in, hit []float64
	for range 2 {
		r := post(t, url+"/openai/v1/responses", body)
		if r.status != 200 {
			t.Fatalf("%d %v", r.status, r.body)
		}
		usage, _ := r.body["usage"].(map[string]any)
		d, _ := usage["input_tokens_details"].(map[string]any)
		n, _ := usage["input_tokens"].(float64)
		c, _ := d["cached_tokens"].(float64)
		in, hit = append(in, n), append(hit, c)
	}
	if want := cacheMin + float64(int64(in[1]-1-cacheMin)/cacheBlock*cacheBlock); hit[0] != 0 || hit[1] != want {
		t.Errorf("input_tokens_details.cached_tokens %v of %v, want none then %v", hit, in, want)
	}
}

// The cache holds at most its limit, dropping the least recently used, and
// its record of uses stays in proportion however often keys are refreshed.
func TestPromptCacheIsBounded(t *testing.T) {
	pc := newPromptCache(time.Hour, 4)
	now := time.Now()
	key := func(i int) prefixKey { return prefixKey{byte(i), byte(i >> 8)} }
	for i := range 6 {
		now = now.Add(time.Second)
		pc.use([]prefixKey{key(i)}, now)
		pc.use([]prefixKey{key(0)}, now) // kept fresh
	}
	if len(pc.used) != 4 {
		t.Fatalf("%d entries, want the limit, 4", len(pc.used))
	}
	for _, i := range []int{0, 3, 4, 5} {
		if _, ok := pc.used[key(i)]; !ok {
			t.Errorf("key %d was dropped; the least recently used (1, 2) should go", i)
		}
	}
	for range 100_000 {
		now = now.Add(time.Millisecond)
		pc.use([]prefixKey{key(0), key(5)}, now)
	}
	if n := len(pc.order) - pc.head; n > 2*1024+2 || cap(pc.order) > 8*1024 {
		t.Errorf("after 100,000 refreshes the record of uses holds %d (capacity %d)", n, cap(pc.order))
	}
	if got := pc.use([]prefixKey{key(0)}, now.Add(time.Hour)); got != 0 {
		t.Errorf("an hour idle: %d cached, want none", got)
	}
	if len(pc.used) != 1 {
		t.Errorf("expired entries kept: %d", len(pc.used))
	}
}
