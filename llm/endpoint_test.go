package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
)

// endpointKey is the key every hostile endpoint here is sent: it must
// reach no error, and no server but the configured one.
const endpointKey = "endpoint-canary-3c9e71d2a4f5b608"

// hostile serves h as deployment d1's endpoint and returns a Caller over
// it (see callerAt) and the deployment.
func hostile(tb testing.TB, h http.Handler, dopts DispatcherOptions) (*Caller, budget.Deployment) {
	tb.Helper()
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return callerAt(tb, ts.URL, dopts)
}

// callerAt is a Caller over deployment d1 at endpoint, with a budget of
// its own: one deployment, no attempt but the first, so each request the
// server counts is one the caller chose to send.
func callerAt(tb testing.TB, endpoint string, dopts DispatcherOptions) (*Caller, budget.Deployment) {
	tb.Helper()
	cfg, _, err := parseConfig("headroom.yaml", []byte(fmt.Sprintf(
		"deployments:\n  - {name: d1, endpoint: %s, model: gpt-4o, tpm: 600000, auth: {api_key_env: ENDPOINT_KEY}}\n", endpoint)))
	if err != nil {
		tb.Fatal(err)
	}
	router, err := budget.NewRouter(budget.NewMemStore(budget.MemOptions{}), cfg, budget.RouterOptions{ExtraWaits: new(0)})
	if err != nil {
		tb.Fatal(err)
	}
	dopts.Getenv = func(string) string { return endpointKey }
	disp, err := NewDispatcher(router, cfg, dopts)
	if err != nil {
		tb.Fatal(err)
	}
	return &Caller{Types: calltypes.Default(), Dispatcher: disp}, cfg.Deployments[0]
}

func yesNoInput(tb testing.TB) json.RawMessage {
	tb.Helper()
	in, err := os.ReadFile("../calltypes/examples/yes-no.json")
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

// answering is an endpoint that answers every request 200 with body, as
// contentType, counting the requests.
func answering(contentType, body string, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write([]byte(body))
	})
}

// checkEndpointError holds err to what an answer that is not the API's
// must give: an *EndpointError that names d1 and its host, and not the key.
func checkEndpointError(t *testing.T, what string, err error, host string) *EndpointError {
	t.Helper()
	var ee *EndpointError
	if !errors.As(err, &ee) {
		t.Errorf("%s: %v; want an *EndpointError", what, err)
		return nil
	}
	if msg := err.Error(); !strings.Contains(msg, "d1 ("+host+")") || strings.Contains(msg, endpointKey) {
		t.Errorf("%s: %q; want it to name d1 (%s), and never the key", what, msg, host)
	}
	return ee
}

// A deployment that answers 200 with what is not a chat completion (a
// proxy's sign-in page, JSON cut short, nothing) fails the call with an
// error naming it, once: no panic, no repair request, no value.
func TestAnAnswerThatIsNotTheAPIsIsAnErrorNamingTheEndpoint(t *testing.T) {
	for _, c := range []struct{ name, contentType, body, want string }{
		{"empty", "application/json", "", "an empty body"},
		{"null", "application/json", "null", "no choices"},
		{"proxy page", "text/html; charset=utf-8", "<html><body><h1>Sign in to the proxy</h1></body></html>", "of text/html"},
		{"a page called JSON", "application/json", "<html><body>Sign in</body></html>", "invalid character"},
		{"truncated", "application/json", `{"id":"x","object":"chat.completion","choices":[{"index":0,"mess`, "unexpected EOF"},
		{"plain text", "", "ok", "of text/plain"},
		{"an array", "application/json", "[]", "cannot unmarshal"},
		{"a string", "application/json", `"ok"`, "cannot unmarshal"},
		{"no choices", "application/json", `{"id":"x","object":"chat.completion"}`, "no choices"},
		{"choices null", "application/json", `{"choices":null}`, "no choices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int64
			caller, d := hostile(t, answering(c.contentType, c.body, &n), DispatcherOptions{})
			host := endpointHost(&d)
			out, _, err := caller.Call(context.Background(), calltypes.YesNo, yesNoInput(t), CallOptions{})
			if ee := checkEndpointError(t, "call", err, host); ee != nil && (ee.Status != 200 || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("call: %v; want HTTP 200 and %q", err, c.want)
			}
			if out != nil || n.Load() != 1 {
				t.Errorf("answer %q after %d request(s); want none after one", out, n.Load())
			}

			_, err = Probe(context.Background(), d, ProbeOptions{Getenv: func(string) string { return endpointKey }})
			checkEndpointError(t, "probe", err, host)

			_, _, err = caller.Dispatcher.Respond(context.Background(), budget.Call{Tokens: 100},
				responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("next")}})
			if c.body != `{"id":"x","object":"chat.completion"}` && c.body != `{"choices":null}` { // a response object, to the Responses API
				checkEndpointError(t, "respond", err, host)
			}
		})
	}
}

// hugeAnswer is a chat completion whose content runs to size bytes,
// written a chunk at a time: written says how much of it went out before
// the client hung up.
type hugeAnswer struct {
	size    int64
	written atomic.Int64
	done    chan struct{}
}

func (h *hugeAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer close(h.done)
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)); err != nil {
		return
	}
	chunk := []byte(strings.Repeat("yes ", 8<<10))
	for h.written.Load() < h.size {
		n, err := w.Write(chunk)
		h.written.Add(int64(n))
		if err != nil {
			return
		}
	}
	w.Write([]byte(`"}}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`))
}

// An answer larger than any a call capped as this one can take is a bad
// answer, read no further than its bound: not the budget's "too large",
// which the repair request of a 64 MB answer once was.
func TestAnAnswerPastItsBoundIsReadNoFurther(t *testing.T) {
	const size = 64 << 20
	h := &hugeAnswer{size: size, done: make(chan struct{})}
	caller, d := hostile(t, h, DispatcherOptions{})
	_, _, err := caller.Call(context.Background(), calltypes.YesNo, yesNoInput(t), CallOptions{})
	ee := checkEndpointError(t, "call", err, endpointHost(&d))
	if ee == nil || !errors.Is(err, errTooLarge) || errors.Is(err, budget.ErrTooLarge) || !strings.Contains(err.Error(), "read no further") {
		t.Fatalf("a 64 MB answer: %v", err)
	}
	select {
	case <-h.done:
	case <-time.After(time.Minute):
		t.Fatal("the server still writes a minute after the call ended: the client did not hang up")
	}
	// What the socket buffers take is all that went out past the bound.
	if w := h.written.Load(); w >= size {
		t.Errorf("the server wrote all %d bytes: the answer was read to its end", w)
	}
	t.Logf("%d KiB went out of %d MiB; the bound is %d KiB", h.written.Load()>>10, size>>20, answerBound(64, 1)>>10)
}

// An answer as large as the cap allows (every token one of the longest)
// is read whole.
func TestAnAnswerAsLargeAsItsCapAllowsIsRead(t *testing.T) {
	const maxTokens = 4096
	content := strings.Repeat(strings.Repeat(" ", 127)+"x", maxTokens) // 128 bytes a token
	body, err := json.Marshal(map[string]any{
		"id": "x", "object": "chat.completion", "model": "gpt-4o",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": maxTokens, "total_tokens": maxTokens + 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	caller, _ := hostile(t, answering("application/json", string(body), &n), DispatcherOptions{})
	res, _, err := caller.Dispatcher.Chat(context.Background(), budget.Call{Tokens: maxTokens + 100}, chat("x", maxTokens))
	if err != nil || res.Choices[0].Message.Content != content {
		t.Fatalf("a %d KiB answer to a call capped at %d tokens: %v", len(body)>>10, maxTokens, err)
	}
}

// recorder is a server the config never named: it counts what reaches it
// and the api-key each request carried.
type recorder struct {
	mu   sync.Mutex
	keys []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.keys = append(rec.keys, r.Header.Get("Api-Key"))
	rec.mu.Unlock()
	w.WriteHeader(http.StatusInternalServerError)
}

func (rec *recorder) got() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.keys...)
}

// redirecting answers every request with a redirect to the same host on
// another port, a user, password and signature in the Location.
func redirecting(status int, to *url.URL) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loc := *to
		loc.User = url.UserPassword("user", "pw-in-location")
		loc.Path, loc.RawQuery = r.URL.Path, r.URL.RawQuery+"&sig=sig-in-location"
		w.Header().Set("Location", loc.String())
		w.WriteHeader(status)
	})
}

// A redirect from an Azure endpoint is never followed, whichever way
// headroom opens it: the key never reaches a server the config never
// named, and the error names the endpoint and says what it refused,
// without the Location's credentials. The control shows the same
// redirect carries the key to the other server when a client follows it.
func TestARedirectIsNeverFollowed(t *testing.T) {
	other := &recorder{}
	ots := httptest.NewServer(other)
	defer ots.Close()
	to, _ := url.Parse(ots.URL)

	// The control: openai-go's Azure client on a plain http.Client (the
	// SDK's own guard lets a loopback endpoint move to another port), and
	// a plain POST, each followed to the other server with the key.
	ep := httptest.NewServer(redirecting(http.StatusTemporaryRedirect, to))
	defer ep.Close()
	plain := openai.NewClient(azure.WithEndpoint(ep.URL, budget.DefaultAPIVersion), azure.WithAPIKey(endpointKey),
		azure.WithUnsafeAllowHTTP(), option.WithHTTPClient(&http.Client{}), option.WithMaxRetries(0))
	p := chat("x", 10)
	p.Model = "d1"
	plain.Chat.Completions.New(context.Background(), p)
	req, _ := http.NewRequest(http.MethodPost, ep.URL+"/openai/deployments/d1/chat/completions", strings.NewReader("{}"))
	req.Header.Set("Api-Key", endpointKey)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	if got := other.got(); len(got) != 2 || got[0] != endpointKey || got[1] != endpointKey {
		t.Fatalf("the control: the other server got %q; want the key twice, or this test proves nothing", got)
	}

	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, shared := range []*http.Client{nil, {}} {
			name := fmt.Sprintf("%d, default client", status)
			if shared != nil {
				name = fmt.Sprintf("%d, the caller's client", status)
			}
			t.Run(name, func(t *testing.T) {
				before := len(other.got())
				caller, d := hostile(t, redirecting(status, to), DispatcherOptions{HTTPClient: shared})
				host := endpointHost(&d)
				_, _, callErr := caller.Call(context.Background(), calltypes.YesNo, yesNoInput(t), CallOptions{})
				_, probeErr := Probe(context.Background(), d, ProbeOptions{HTTPClient: shared, Getenv: func(string) string { return endpointKey }})
				for what, err := range map[string]error{"call": callErr, "probe": probeErr} {
					checkEndpointError(t, what, err, host)
					msg := fmt.Sprint(err)
					if !strings.Contains(msg, "redirect to "+to.Host) || !strings.Contains(msg, "never followed") {
						t.Errorf("%s: %q; want it to say the redirect to %s was refused", what, msg, to.Host)
					}
					if strings.Contains(msg, "pw-in-location") || strings.Contains(msg, "sig-in-location") {
						t.Errorf("%s: %q holds the Location's credentials", what, msg)
					}
				}
				if got := other.got()[before:]; len(got) != 0 {
					t.Errorf("the other server got %d request(s), keys %q", len(got), got)
				}
				if shared != nil && shared.CheckRedirect != nil {
					t.Error("the caller's own client had its redirect policy changed")
				}
			})
		}
	}
}

// silent accepts a request and never answers; trickling answers 200 and
// then one byte of a chat completion every 20 ms, never ending. Each
// stops when its client hangs up (which the server sees once it has read
// the request's body).
func silent(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

func trickling(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("y", 1<<20)
	for i := 0; i < len(body); i++ {
		if _, err := w.Write([]byte{body[i]}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// An endpoint that never answers, or trickles its answer, holds a call no
// longer than its deadline: the caller's (the agent's per-call timeout),
// or, given none, the Caller's own; and a probe's the same.
func TestASilentOrTricklingEndpointCannotOutlastTheCall(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{"silent": silent, "trickling": trickling} {
		t.Run(name, func(t *testing.T) {
			caller, d := hostile(t, h, DispatcherOptions{})
			caller.Timeout = 2 * time.Second
			for _, what := range []string{"no deadline", "a deadline"} {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if what == "a deadline" {
					ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
				}
				began := time.Now()
				_, _, err := caller.Call(ctx, calltypes.YesNo, yesNoInput(t), CallOptions{})
				cancel()
				if took := time.Since(began); !errors.Is(err, context.DeadlineExceeded) || took > time.Minute {
					t.Errorf("%s: %v after %v; want the deadline's error, at 2 s", what, err, took)
				}
			}
			began := time.Now()
			_, err := Probe(context.Background(), d, ProbeOptions{Timeout: 2 * time.Second, Getenv: func(string) string { return endpointKey }})
			if took := time.Since(began); err == nil || took > time.Minute {
				t.Errorf("probe: %v after %v; want an error at 2 s", err, took)
			}
		})
	}
}
