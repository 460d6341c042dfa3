package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
)

// endpointCanary is the key the hostile endpoints here are configured
// with: no output may hold it, and no server but the named one get it.
const endpointCanary = "AZKEY-ENDPOINT-CANARY-51c8e0a2d7"

// endpointModes are what an endpoint that is not Azure OpenAI answers,
// each for every request.
var endpointModes = map[string]http.HandlerFunc{
	"empty": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
	},
	"null": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "null")
	},
	"html": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><h1>Sign in to the proxy</h1></body></html>")
	},
	"truncated": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"mess`)
	},
	"20 MB": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
		chunk := strings.Repeat("word ", 1<<12)
		for n := 0; n < 20<<20; n += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	},
}

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

// headroom call against an endpoint that answers what is not a chat
// completion says so, naming the deployment and its host, and exits 1 (a
// bad answer, not the budget's 3): never a panic.
func TestCallAgainstAnEndpointThatIsNotAzure(t *testing.T) {
	t.Parallel()
	for name, h := range endpointModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg, host := endpointConfig(t, dir, h)
			r := runBinary(t, endpointEnv, "call", "yes-no", "--config", cfg, "--input", "../../calltypes/examples/yes-no.json")
			checkNoPanic(t, "call", r)
			if r.code != exitFailed || !strings.Contains(r.stderr, "d1 ("+host+") answered HTTP 200 with") {
				t.Errorf("exit %d, want %d with an error naming d1 (%s):\n%s", r.code, exitFailed, host, r.stderr)
			}
		})
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

// A 307 to the same host on another port is refused by call and by the
// doctor's probe: the other port never hears of the key.
func TestARedirectCarriesTheKeyNowhere(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Api-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer other.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	dir := t.TempDir()
	cfg, host := endpointConfig(t, dir, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	r := runBinary(t, endpointEnv, "call", "yes-no", "--config", cfg, "--input", "../../calltypes/examples/yes-no.json")
	checkNoPanic(t, "call", r)
	if r.code != exitFailed || !strings.Contains(r.stderr, "d1 ("+host+") answered HTTP 307 with a redirect to "+otherHost) {
		t.Errorf("call: exit %d, want %d saying the redirect was refused:\n%s", r.code, exitFailed, r.stderr)
	}
	r = runBinary(t, endpointEnv, "budget", "doctor", "--config", cfg, "--probe")
	checkNoPanic(t, "doctor", r)
	if said := strings.Join(strings.Fields(r.stdout+r.stderr), " "); !strings.Contains(said, "redirect to "+otherHost) {
		t.Errorf("doctor: exit %d, not a word of the redirect:\n%s%s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 0 {
		t.Errorf("the other port got %d request(s), keys %q", len(keys), keys)
	}
}

// A 429 whose Retry-After is the year 9999 fails the call at once, saying
// why, with the budget's code: the call does not sleep towards it.
func TestAFarRetryAfterFailsTheCallAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, _ := endpointConfig(t, dir, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"code":"429","message":"slow down"}}`)
	}))
	r := runBinary(t, endpointEnv, "call", "yes-no", "--config", cfg, "--input", "../../calltypes/examples/yes-no.json")
	checkNoPanic(t, "call", r)
	if r.code != exitBudget || !strings.Contains(r.stderr, "d1 asked to wait 2.52e+11 s (Retry-After), past the call's deadline") || r.wall > time.Minute {
		t.Errorf("exit %d after %v, want %d at once with the reason:\n%s", r.code, r.wall, exitBudget, r.stderr)
	}
}

// A run whose model endpoint answers what is not a chat completion, or
// nothing, ends as a run does: its result.json written, its Chrome
// profile removed, exit 1.
func TestRunAgainstAnEndpointThatIsNotAzure(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	modes := map[string]http.HandlerFunc{"html": endpointModes["html"], "truncated": endpointModes["truncated"], "20 MB": endpointModes["20 MB"], "silent": silentEndpoint}
	for name, h := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg, host := endpointConfig(t, dir, h)
			// A short path: Chrome's socket lives under it.
			tmp, err := os.MkdirTemp("", "ep")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(tmp)
			task := writeFile(t, dir, "task.yaml", zebraTask(srv.URL)+"deadline: 10s\n")
			out := filepath.Join(dir, "out")
			r := runBinary(t, append([]string{"TMPDIR=" + tmp}, endpointEnv...), "run", task, "--config", cfg, "--out", out)
			checkNoPanic(t, "run", r)
			if r.code != exitFailed {
				t.Errorf("exit %d, want %d:\n%s", r.code, exitFailed, r.stderr)
			}
			data, err := os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatalf("no result.json: %v\n%s", err, r.stderr)
			}
			res := decodeResult(t, "result.json", data)
			want := "d1 (" + host + ") answered HTTP 200 with"
			if name == "silent" {
				want = "deadline"
			}
			if res.Status == agent.Succeeded || !strings.Contains(res.Reason, want) {
				t.Errorf("status %s, reason %q; want a failure saying %q", res.Status, res.Reason, want)
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "headroom-chrome-*"))
			if len(left) != 0 {
				t.Errorf("the Chrome profile is left on disk: %v", left)
			}
		})
	}
}
