package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

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
	cfg, _, err := budget.ParseConfig("headroom.yaml", []byte(fmt.Sprintf(
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
