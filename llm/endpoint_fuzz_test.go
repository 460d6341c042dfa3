package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/calltypes"
)

// served is what the fuzzed endpoint answers next.
type served struct {
	status int
	header http.Header
	body   []byte
}

// fuzzedEndpoint answers every request with what was last set.
type fuzzedEndpoint struct {
	mu  sync.Mutex
	now served
}

func (e *fuzzedEndpoint) set(s served) {
	e.mu.Lock()
	e.now = s
	e.mu.Unlock()
}

func (e *fuzzedEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	s := e.now
	e.mu.Unlock()
	for k, vs := range s.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(s.status)
	w.Write(s.body)
}

// headerLines reads "Name: value" lines; a line without a colon is left
// out.
func headerLines(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) != "" {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

const fuzzCompletion = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-2024-11-20",` +
	`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{\"answer\":true,\"reason\":\"the page shows it\"}"}}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":12,"total_tokens":132}}`

// FuzzChatResponse serves arbitrary answers (a status, headers, a body)
// over real HTTP to the real openai-go client, driven through the
// dispatcher, the answer's reading and the parser as a call is, and
// through the probe: neither ever panics, a call ends with an answer or
// an error and never both, and no error holds the key.
func FuzzChatResponse(f *testing.F) {
	f.Add(200, "Content-Type: application/json", []byte(fuzzCompletion))
	f.Add(200, "Content-Type: application/json", []byte(strings.Replace(fuzzCompletion, `"total_tokens":132`, `"total_tokens":-9223372036854775808`, 1)))
	f.Add(200, "Content-Type: application/json", []byte(strings.Replace(fuzzCompletion, `"stop"`, `"length"`, 1)))
	f.Add(200, "Content-Type: application/json", []byte(`{"choices":[{}]}`))
	f.Add(200, "Content-Type: application/json", []byte(`{"choices":[null]}`))
	f.Add(200, "Content-Type: application/json", []byte(`null`))
	f.Add(200, "Content-Type: application/json", []byte(``))
	f.Add(200, "Content-Type: application/json", []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"mess`))
	f.Add(200, "Content-Type: text/html", []byte(`<html><body><h1>Sign in to the proxy</h1></body></html>`))
	f.Add(200, "Content-Type: application/json\nContent-Length: 9999", []byte(`{"choices":`))
	f.Add(429, "Retry-After: Fri, 31 Dec 9999 23:59:59 GMT\nContent-Type: application/json", []byte(`{"error":{"code":"429","message":"slow down"}}`))
	f.Add(429, "Retry-After-Ms: 1e400\nx-ratelimit-remaining-tokens: -1", []byte(`{"error":{}}`))
	f.Add(307, "Location: http://user:pw@127.0.0.1:1/openai?sig=x", []byte(``))
	f.Add(400, "Content-Type: application/json", []byte(`{"error":{"code":"bad","message":"`+endpointKey+`","param":"n"}}`))
	f.Add(401, "Content-Type: application/json", []byte(`{"error":{"code":"401","message":"Access denied"}}`))
	f.Add(503, "Content-Type: text/html", []byte(`<html>Service Unavailable</html>`))

	ep := &fuzzedEndpoint{}
	ts := httptest.NewUnstartedServer(ep)
	// Each exec opens its clients afresh: connections closed after each
	// answer, so none is left idle for the next thousand.
	ts.Config.SetKeepAlivesEnabled(false)
	ts.Start()
	defer ts.Close()
	in := yesNoInput(f)
	getenv := func(string) string { return endpointKey }
	f.Fuzz(func(t *testing.T, status int, header string, body []byte) {
		if status < 0 {
			status = -(status + 1)
		}
		ep.set(served{status: 200 + status%400, header: headerLines(header), body: body})
		// A fresh budget each time: one answer's breaker or limits must
		// not decide the next.
		c, d := callerAt(t, ts.URL, DispatcherOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, _, err := c.Call(ctx, calltypes.YesNo, in, CallOptions{})
		if (out == nil) == (err == nil) {
			t.Fatalf("answer %q and error %v: want exactly one", out, err)
		}
		if err != nil && strings.Contains(err.Error(), endpointKey) {
			t.Fatalf("the error holds the key: %v", err)
		}
		if _, err := Probe(ctx, d, ProbeOptions{Getenv: getenv}); err != nil && strings.Contains(err.Error(), endpointKey) {
			t.Fatalf("the probe's error holds the key: %v", err)
		}
	})
}
