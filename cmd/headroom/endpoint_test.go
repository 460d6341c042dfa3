package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// endpointCanary is the key the hostile endpoints here are configured
// with: no output may hold it, and no server but the named one get it.
const endpointCanary = "AZKEY-ENDPOINT-CANARY-51c8e0a2d7"

// silentEndpoint reads the request and never answers; tricklingEndpoint
// answers 200 and a byte of a chat completion every 50 ms, never ending.
// Each stops when its client hangs up.
func silentEndpoint(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

func tricklingEndpoint(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := io.WriteString(w, " "); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// endpointConfig serves h as deployment d1 and writes a config naming it;
// it returns the config file and the endpoint's host.
func endpointConfig(t *testing.T, dir string, h http.Handler) (string, string) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	host := strings.TrimPrefix(ts.URL, "http://")
	return writeFile(t, dir, "cfg.yaml", fmt.Sprintf(
		"deployments:\n  - {name: d1, endpoint: %q, deployment: d1, model: gpt-4o, model_version: \"2024-11-20\", tpm: 600000, auth: {api_key_env: ENDPOINT_TEST_KEY}}\n", ts.URL)), host
}

var endpointEnv = []string{"ENDPOINT_TEST_KEY=" + endpointCanary}

// checkNoPanic fails the test on what only a panic writes, or on the key
// in an output.
func checkNoPanic(t *testing.T, what string, r ran) {
	t.Helper()
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("%s panicked (exit %d):\n%s", what, r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, endpointCanary) {
		t.Errorf("%s wrote the key", what)
	}
}

// A silent or trickling endpoint holds headroom call no longer than its
// --timeout, and the budget doctor's probe no longer than its own.
func TestCallAndDoctorAgainstASilentOrTricklingEndpoint(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]http.HandlerFunc{"silent": silentEndpoint, "trickling": tricklingEndpoint} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg, _ := endpointConfig(t, dir, h)
			r := runBinary(t, endpointEnv, "call", "yes-no", "--config", cfg, "--input", "../../calltypes/examples/yes-no.json", "--timeout", "3s")
			checkNoPanic(t, "call", r)
			if r.code != exitFailed || !strings.Contains(r.stderr, "deadline") || r.wall > time.Minute {
				t.Errorf("call: exit %d after %v, want %d at its 3 s deadline:\n%s", r.code, r.wall, exitFailed, r.stderr)
			}
			r = runBinary(t, endpointEnv, "budget", "doctor", "--config", cfg, "--probe", "--timeout", "3s")
			checkNoPanic(t, "doctor", r)
			if r.code != exitFailed || r.wall > time.Minute {
				t.Errorf("doctor: exit %d after %v, want %d at its 3 s bound:\n%s%s", r.code, r.wall, exitFailed, r.stdout, r.stderr)
			}
		})
	}
}
