package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/testsite"
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
	canaryPW1      = "CANARY-PW1-6408"       // typed into a password field named pw1, posted as a form, JSON and text
	canaryURLCode  = "CANARY-URLCODE-3301"   // code= in a link's query, followed
	canaryURLSess  = "CANARY-URLSESS-7720"   // session_id= in the link, echoed by the page it opens
	canaryURLAuth  = "CANARY-URLAUTH-5146"   // auth= in the link
)

func canaries() map[string]string {
	return map[string]string{
		"deployment key": canaryKey, "cookie": testsite.SessionCookie, "authorization header": canaryAuth,
		"session header": canarySession, "code parameter": canaryCode, "JSON password": canaryJSONPass,
		"JSON api_key": canaryAPIKey, "typed password": canaryTyped, "password value attribute": canaryAttr,
		"password typed into pw1": canaryPW1, "code in a link": canaryURLCode, "session_id in a link": canaryURLSess,
		"auth in a link": canaryURLAuth,
	}
}

// split writes s as a JavaScript expression that builds it, so the page's
// source never holds it whole.
func split(s string) string {
	i := len(s) / 2
	return fmt.Sprintf("[%q, %q].join('')", s[:i], s[i:])
}

// received is what the canary site was sent: the secrets must reach it,
// and nothing else.
type received struct {
	mu   sync.Mutex
	seen []string
}

func (r *received) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
}

func (r *received) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.seen, func(x string) bool { return strings.Contains(x, s) })
}

func canarySite(t *testing.T) (*httptest.Server, *received) {
	t.Helper()
	got := &received{}
	login := `<!doctype html><html><head><title>Canary login</title></head><body>
<h1>Sign in</h1>
<input type=password id=pw>
<label>Second password <input type=password id=pw1 name=pw1></label>
<button id=signin>Sign in</button>
<p id=state>not signed in</p>
<p><a id=account>Your account</a></p>
<script>
document.getElementById('account').href = '/canary/account?code=' + ` + split(canaryURLCode) + ` +
  '&session_id=' + ` + split(canaryURLSess) + ` + '&auth=' + ` + split(canaryURLAuth) + ` + '&view=full';
function postPW1() {
  const v = document.getElementById('pw1').value;
  if (!v) return;
  fetch('/canary/form', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'user=ann&pw1=' + encodeURIComponent(v)});
  fetch('/canary/form', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({user: 'ann', pw1: v})});
  fetch('/canary/form', {method: 'POST', headers: {'Content-Type': 'text/plain'}, body: 'user=ann;pw1=' + v});
}
</script>
<script>
function post(body) {
  return fetch('/canary/api?code=' + ` + split(canaryCode) + ` + '&q=1', {method: 'POST',
    headers: {'Authorization': 'Bearer ' + ` + split(canaryAuth) + `, 'X-Session-Token': ` + split(canarySession) + `},
    body: JSON.stringify(body)}).then(r => r.json());
}
post({user: 'ann', password: ` + split(canaryJSONPass) + `, credentials: {api_key: ` + split(canaryAPIKey) + `}});
document.getElementById('signin').onclick = () => {
  postPW1();
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
	mux.HandleFunc("POST /canary/form", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		got.add("form " + string(b))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /canary/account", func(w http.ResponseWriter, r *http.Request) {
		got.add("account " + r.URL.RawQuery)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page shows the session it was given, where no name marks it.
		fmt.Fprintf(w, `<!doctype html><html><head><title>Your account</title></head><body><h1>Your account</h1>
<p>Signed in, session %s.</p></body></html>`, html.EscapeString(r.URL.Query().Get("session_id")))
	})
	mux.Handle("/", testsite.Handler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: testsite.SessionCookie, Path: "/"})
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
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
	chrometest.Require(t)
	srv, got := canarySite(t)
	dir := t.TempDir()
	out := outputs{}
	ran := func(name string, code int, stdout, stderr string) {
		out[name+": stdout"], out[name+": stderr"] = stdout, stderr
	}
	steps := writeFile(t, dir, "steps.yaml", "- type: \"#pw\"\n  text: "+canaryTyped+"\n- type: \"#pw1\"\n  text: "+canaryPW1+
		"\n- click: \"#signin\"\n- expect: Signed in as ann\n- click: \"#account\"\n- expect: Your account\n")
	login := srv.URL + "/canary/login.html"

	// observe, live: the prefilled password and the typed one.
	code, so, se := runCmd(t, "observe", srv.URL+"/canary/prefilled.html")
	ran("observe prefilled", code, so, se)
	if code != exitOK || !strings.Contains(so, "type=password") {
		t.Errorf("observe prefilled exited %d:\n%s\n%s", code, so, se)
	}
	// In processes of their own: what one command made secret in this
	// test's process must not hide what another would leak.
	o := runBinary(t, nil, "observe", login, "--json")
	ran("observe login, before", o.code, o.stdout, o.stderr)
	if o.code != exitOK || !strings.Contains(o.stdout, `"href": "/canary/account?code=%5Bredacted%5D\u0026session_id=%5Bredacted%5D\u0026auth=%5Bredacted%5D\u0026view=full"`) {
		t.Errorf("observe login exited %d:\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	o = runBinary(t, nil, "observe", login, "--steps", steps, "--json")
	ran("observe login", o.code, o.stdout, o.stderr)
	if o.code != exitOK || !strings.Contains(o.stdout, "Signed in, session [redacted]") {
		t.Errorf("observe login exited %d:\n%s\n%s", o.code, o.stdout, o.stderr)
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
	if code != exitOK || !strings.Contains(so, "Your account") {
		t.Errorf("observing the recording exited %d (the redacted requests should match):\n%s\n%s", code, so, se)
	}

	// call --record and --replay through a config whose deployment's key
	// is a canary, with the key in the call's input by accident.
	simURL := heuristicSim(t, "d:gpt-4o").URL
	t.Setenv("HEADROOM_CANARY_KEY", canaryKey)
	callDir := filepath.Join(dir, "call")
	_ = os.MkdirAll(callDir, 0o755)
	cfg := writeFile(t, callDir, "headroom.yaml", fmt.Sprintf("deployments:\n  - {name: d, endpoint: %q, model: gpt-4o, tpm: 1000000, auth: {api_key_env: HEADROOM_CANARY_KEY}}\n", simURL))
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
  - type: "#pw1"
    text: %s
  - click: "#signin"
  - expect: Signed in as ann
  - click: "#account"
`, login, canaryTyped, canaryPW1))
	r := runBinary(t, nil, "run", task, "--out", filepath.Join(runDir, "out"), "--record-har", filepath.Join(runDir, "run.har"), "--record-calls", filepath.Join(runDir, "calls.jsonl"))
	ran("run", r.code, r.stdout, r.stderr)
	if r.code < 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	t.Logf("run exited %d", r.code)
	// The recording replays: the requests that held the typed secrets
	// match, redacted the same way.
	replayed := writeFile(t, runDir, "replay.yaml", mustRead(t, task)+"replay: "+filepath.Join(runDir, "run.har")+"\n")
	r = runBinary(t, nil, "run", replayed)
	ran("run replayed", r.code, r.stdout, r.stderr)
	if strings.Contains(r.stderr, "missed") || r.code != exitOK && r.code != exitFailed {
		t.Errorf("the replay of the run exited %d:\n%s", r.code, r.stderr)
	}
	for _, sent := range []string{"pw1=" + canaryPW1, `"pw1":"` + canaryPW1, "code=" + canaryURLCode, "session_id=" + canaryURLSess, "auth=" + canaryURLAuth} {
		if !got.has(sent) {
			t.Errorf("the site never got %s: the secret must reach it", sent)
		}
	}

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
			if n == in || n == miss || n == cfg || n == steps || n == task || n == replayed { // what the test wrote
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

// A server may echo the request it refuses, key and all, as sent,
// upper-cased or in two halves: whatever it sends back, the key reaches
// no output of call or run, whole or in part.
func TestAKeyEchoedInAnErrorReachesNoOutput(t *testing.T) {
	t.Parallel()
	const key = "c4a9e1f07b3d5e8a2f6c9b1d0e7a3c5f" // random, as an Azure key is
	// A front door to the simulator that answers every chat call with a
	// 400 quoting the request's key.
	sim, err := url.Parse(heuristicSim(t, "echo:gpt-4o").URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(sim)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		k := r.Header.Get("api-key")
		half := len(k) / 2
		fmt.Fprintf(w, `{"error": {"code": "invalid_request_error", "param": "api-key", "message": "Invalid header 'api-key': %s (%s, %s) is not valid here; it begins %s and ends %s; request: %s %s?api-key=%s"}}`,
			k, url.QueryEscape(k), strings.ToUpper(k), k[:half], k[half:], r.Method, r.URL.Path, url.QueryEscape(k))
	}))
	defer front.Close()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "headroom.yaml", fmt.Sprintf("deployments:\n  - {name: echo, endpoint: %q, model: gpt-4o, tpm: 1000000, auth: {api_key_env: ECHO_KEY}}\n", front.URL))
	env := []string{"ECHO_KEY=" + key}
	in := writeFile(t, dir, "in.json", `{"question": "Is the box checked?", "goal": "check the box", "page": "url: https://x.example/\ntitle: Terms\n[0] checkbox \"Agree\" checked"}`)
	site := animalSite(t)
	task := writeFile(t, dir, "task.yaml", zebraTask(site.URL))
	out := filepath.Join(dir, "out")

	outputs := map[string]string{}
	c := runBinary(t, env, "call", "yes-no", "--input", in, "--config", cfg)
	outputs["call: stdout"], outputs["call: stderr"] = c.stdout, c.stderr
	if c.code != exitFailed || !strings.Contains(c.stderr, "400") {
		t.Errorf("call exited %d, want 1 with the 400:\n%s", c.code, c.stderr)
	}
	r := runBinary(t, env, "run", task, "--config", cfg, "--out", out)
	outputs["run: stdout"], outputs["run: stderr"] = r.stdout, r.stderr
	if r.code != exitFailed || !strings.Contains(r.stdout, "Invalid header") {
		t.Errorf("run exited %d, want 1 with the 400 in its result:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"result.json", "report.html"} {
		outputs[f] = mustRead(t, filepath.Join(out, f))
	}
	for name, text := range outputs {
		for i := 0; i+8 <= len(key); i++ {
			if strings.Contains(strings.ToLower(text), strings.ToLower(key[i:i+8])) {
				t.Errorf("%q of the key reached %s:\n%s", key[i:i+8], name, text)
				break
			}
		}
	}
}
