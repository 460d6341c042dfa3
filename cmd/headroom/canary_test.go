package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/internal/testsite"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// The canaries: known secrets put through every path a secret can take.
// Those a page script sends are built by the script, so that the page's
// own source (which a HAR must keep to replay it) does not hold them.
const (
	canaryKey      = "CANARY-KEY-4471-azure" // a deployment's key, from the environment
	canaryAuth     = "CANARY-AUTH-6634"      // an Authorization header set by page JS
	canarySession  = "CANARY-SESS-1177"      // an X-Session-Token header set by page JS
	canaryCode     = "CANARY-CODE-8812"      // a code= query parameter set by page JS
	canaryJSONPass = "CANARY-JSONPW-9043"    // a JSON body field "password" posted by page JS
	canaryAPIKey   = "CANARY-APIKEY-3390"    // a nested JSON body field "api_key" posted by page JS
	canaryTyped    = "CANARY-TYPED-5582"     // typed into a password field by a step, posted as JSON
	canaryAttr     = "CANARY-PWATTR-2219"    // a password field's value attribute, no label
)

func canaries() map[string]string {
	return map[string]string{
		"deployment key": canaryKey, "cookie": testsite.SessionCookie, "authorization header": canaryAuth,
		"session header": canarySession, "code parameter": canaryCode, "JSON password": canaryJSONPass,
		"JSON api_key": canaryAPIKey, "typed password": canaryTyped, "password value attribute": canaryAttr,
	}
}

// split writes s as a JavaScript expression that builds it, so the page's
// source never holds it whole.
func split(s string) string {
	i := len(s) / 2
	return fmt.Sprintf("[%q, %q].join('')", s[:i], s[i:])
}

func canarySite(t *testing.T) *httptest.Server {
	t.Helper()
	login := `<!doctype html><html><head><title>Canary login</title></head><body>
<h1>Sign in</h1>
<input type=password id=pw>
<button id=signin>Sign in</button>
<p id=state>not signed in</p>
<script>
function post(body) {
  return fetch('/canary/api?code=' + ` + split(canaryCode) + ` + '&q=1', {method: 'POST',
    headers: {'Authorization': 'Bearer ' + ` + split(canaryAuth) + `, 'X-Session-Token': ` + split(canarySession) + `},
    body: JSON.stringify(body)}).then(r => r.json());
}
post({user: 'ann', password: ` + split(canaryJSONPass) + `, credentials: {api_key: ` + split(canaryAPIKey) + `}});
document.getElementById('signin').onclick = () => {
  post({user: 'ann', password: document.getElementById('pw').value}).then(a => {
    document.getElementById('state').textContent = a.ok ? 'Signed in as ann' : 'refused';
  });
};
</script></body></html>`
	prefilled := `<!doctype html><html><head><title>Canary prefilled</title></head><body>
<form><input type=password value="` + canaryAttr + `"><button>Go</button></form></body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /canary/login.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(login))
	})
	mux.HandleFunc("GET /canary/prefilled.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(prefilled))
	})
	mux.HandleFunc("POST /canary/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	})
	mux.Handle("/", testsite.Handler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: testsite.SessionCookie, Path: "/"})
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// outputs gathers what a command left: its stdout and stderr and every
// file under dirs.
type outputs map[string]string

func (o outputs) files(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				b, rerr := os.ReadFile(p)
				if rerr != nil {
					t.Errorf("read %s: %v", p, rerr)
				}
				o[p] = string(b)
			}
			return nil
		})
	}
}

func TestCanarySecretsReachNoOutput(t *testing.T) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		if _, err := exec.LookPath("chromium"); err != nil {
			t.Skip("no Chromium")
		}
	}
	srv := canarySite(t)
	dir := t.TempDir()
	out := outputs{}
	ran := func(name string, code int, stdout, stderr string) {
		out[name+": stdout"], out[name+": stderr"] = stdout, stderr
	}
	steps := writeFile(t, dir, "steps.yaml", "- type: \"#pw\"\n  text: "+canaryTyped+"\n- click: \"#signin\"\n- expect: Signed in as ann\n")
	login := srv.URL + "/canary/login.html"

	// observe, live: the prefilled password and the typed one.
	code, so, se := runCmd(t, "observe", srv.URL+"/canary/prefilled.html")
	ran("observe prefilled", code, so, se)
	if code != exitOK || !strings.Contains(so, "type=password") {
		t.Errorf("observe prefilled exited %d:\n%s\n%s", code, so, se)
	}
	code, so, se = runCmd(t, "observe", login, "--steps", steps, "--json")
	ran("observe login", code, so, se)
	if code != exitOK || !strings.Contains(so, "Signed in as ann") {
		t.Errorf("observe login exited %d:\n%s\n%s", code, so, se)
	}

	// record, then replay the recording offline: the redacted requests
	// still match.
	recDir := filepath.Join(dir, "record")
	har := filepath.Join(recDir, "login.har")
	code, so, se = runCmd(t, "record", login, "--out", har, "--steps", steps, "--screenshots", filepath.Join(recDir, "shots"), "--json")
	ran("record", code, so, se)
	if code != exitOK {
		t.Fatalf("record exited %d:\n%s\n%s", code, so, se)
	}
	code, so, se = runCmd(t, "observe", "--har", har, "--steps", steps)
	ran("observe --har", code, so, se)
	if code != exitOK || !strings.Contains(so, "Signed in as ann") {
		t.Errorf("observing the recording exited %d (the redacted requests should match):\n%s\n%s", code, so, se)
	}

	// call --record and --replay through a config whose deployment's key
	// is a canary, with the key in the call's input by accident.
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{Name: "d", Model: "gpt-4o", TPM: 1_000_000, Reply: "heuristic"}}},
		azuresim.Options{APIKeys: []string{canaryKey}, Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	simRun, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer simRun.Close()
	t.Setenv("HEADROOM_CANARY_KEY", canaryKey)
	callDir := filepath.Join(dir, "call")
	_ = os.MkdirAll(callDir, 0o755)
	cfg := writeFile(t, callDir, "headroom.yaml", fmt.Sprintf("deployments:\n  - {name: d, endpoint: %q, model: gpt-4o, tpm: 1000000, auth: {api_key_env: HEADROOM_CANARY_KEY}}\n", simRun.URL))
	page, _ := json.Marshal("url: " + login + "\ntitle: Canary login\nSign in. Debug: api-key=" + canaryKey + "\n[0] textbox \"Password\" type=password\n[1] button \"Sign in\"")
	in := writeFile(t, callDir, "in.json", `{"goal": "sign in", "plan": ["sign in"], "step": 1, "page": `+string(page)+`}`)
	cas := filepath.Join(callDir, "calls.jsonl")
	code, so, se = runCmd(t, "call", "click-pick", "--input", in, "--config", cfg, "--record-calls", cas)
	ran("call --record", code, so, se)
	if code != exitOK {
		t.Fatalf("call --record exited %d:\n%s\n%s", code, so, se)
	}
	code, so, se = runCmd(t, "call", "click-pick", "--input", in, "--config", cfg, "--cassette", cas)
	ran("call --replay", code, so, se)
	if code != exitOK {
		t.Errorf("the replay of a call whose input held the key exited %d:\n%s\n%s", code, so, se)
	}
	code, so, se = runCmd(t, "call", "click-pick", "--input", in, "--cassette", cas) // the embedded default: no key known
	ran("call --replay, no key", code, so, se)
	if code != exitOK {
		t.Errorf("the replay, with no key known, of a call whose input held it exited %d:\n%s\n%s", code, so, se)
	}
	miss := writeFile(t, callDir, "miss.json", strings.Replace(mustRead(t, in), `"sign in"`, `"sign out, `+canaryKey+`"`, 1))
	code, so, se = runCmd(t, "call", "click-pick", "--input", miss, "--config", cfg, "--cassette", cas)
	ran("call --replay miss", code, so, se)
	if code == exitOK || !strings.Contains(se, "differs") {
		t.Errorf("a cassette miss exited %d:\n%s\n%s", code, so, se)
	}

	// run, with the embedded default: the password typed by a scripted step.
	runDir := filepath.Join(dir, "run")
	task := writeFile(t, dir, "task.yaml", fmt.Sprintf(`name: canary-login
start_url: %s
goal: Sign in and tell whether you are signed in.
max_steps: 4
steps:
  - type: "#pw"
    text: %s
  - click: "#signin"
`, login, canaryTyped))
	r := runBinary(t, nil, "run", task, "--out", filepath.Join(runDir, "out"), "--record-har", filepath.Join(runDir, "run.har"), "--record-calls", filepath.Join(runDir, "calls.jsonl"))
	ran("run", r.code, r.stdout, r.stderr)
	if r.code < 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	t.Logf("run exited %d", r.code)

	out.files(t, recDir, callDir, runDir)
	for _, must := range []string{har, cas, filepath.Join(runDir, "run.har"), filepath.Join(runDir, "out", "result.json"), filepath.Join(runDir, "out", "report.html"), filepath.Join(runDir, "calls.jsonl")} {
		if _, ok := out[must]; !ok {
			t.Errorf("%s was not written", must)
		}
	}
	if !strings.Contains(out[har], "/canary/api") || !strings.Contains(out[har], "[redacted]") {
		t.Errorf("the HAR has no redacted request to the canary API")
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	found := 0
	for what, c := range canaries() {
		for _, n := range names {
			if n == in || n == miss || n == cfg || n == steps || n == task { // what the test wrote
				continue
			}
			if strings.Contains(out[n], c) {
				found++
				t.Errorf("the %s (%s) reached %s", what, c, n)
			}
		}
	}
	t.Logf("%d canaries through %d outputs: %d found", len(canaries()), len(out), found)
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
