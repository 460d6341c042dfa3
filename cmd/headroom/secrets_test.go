package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// portalSite serves the test sites, the portal behind its login among
// them, and says how many logins reached it.
func portalSite(t *testing.T) (*httptest.Server, testsite.Portal) {
	t.Helper()
	h, portal := testsite.HandlerWithPortal(testsite.Dir())
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, portal
}

// portalEnv gives the portal's account to a run, by the names its tasks
// read.
var portalEnv = []string{"PORTAL_USER=" + testsite.PortalUser, "PORTAL_PASSWORD=" + testsite.PortalPassword}

// loginTask signs in with secrets typed by name, then reports the open
// invoices; domains limits where the password may be typed.
func loginTask(base, domains string) string {
	return fmt.Sprintf(`name: portal-login
start_url: %s/portal/login
goal: Sign in as <secret:portal_user> with the password <secret:portal_password> and report the open invoices.
allowed_domains: [127.0.0.1]
max_steps: 6
deadline: 90s
success: {text: "Welcome back"}
secrets:
  portal_user: {env: PORTAL_USER}
  portal_password: {env: PORTAL_PASSWORD, domains: [%s]}
steps:
  - type: "#user"
    text: "<secret:portal_user>"
  - type: "#pass"
    text: "<secret:portal_password>"
    submit: true
  - expect: Welcome back
`, base, domains)
}

// homeTask starts on a page that needs the session: signed in only when
// the run starts with one.
func homeTask(base, state string) string {
	task := fmt.Sprintf("name: portal-home\nstart_url: %s/portal/home\ngoal: Report how many invoices are open.\n"+
		"allowed_domains: [127.0.0.1]\nmax_steps: 3\ndeadline: 60s\nsuccess: {text: \"Welcome back\"}\n", base)
	if state != "" {
		task += "storage_state: " + state + "\n"
	}
	return task
}

// The canary password reaches the site and nothing else: not stdout,
// stderr, result.json, report.html, the screenshots (by name), the
// cassette, the HAR or the storage state saved; and the state saved
// starts a second run signed in.
func TestRunSecretsReachOnlyTheSite(t *testing.T) {
	t.Parallel()
	srv, portal := portalSite(t)
	dir := t.TempDir()
	out, cassette, har, state := filepath.Join(dir, "out"), filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "run.har"), filepath.Join(dir, "state.json")
	task := writeFile(t, dir, "login.yaml", loginTask(srv.URL, "127.0.0.1"))
	r := runBinary(t, portalEnv, "run", task, "--out", out, "--record-calls", cassette, "--record-har", har, "--save-storage-state", state)
	if r.code != exitOK {
		t.Fatalf("login run: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if portal.Logins() != 1 {
		t.Errorf("the portal saw %d logins with the right password, want 1", portal.Logins())
	}
	res := decodeResult(t, "stdout", []byte(r.stdout))
	if res.Status != agent.Succeeded || res.SuccessBy != agent.SuccessChecked {
		t.Errorf("status %s (%s)", res.Status, res.Reason)
	}
	// Every output, by name; each must exist, so a file never written
	// cannot pass for a clean one.
	outputs := map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr)}
	for _, f := range []string{cassette, har, state} {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
		}
		outputs[filepath.Base(f)] = b
	}
	_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs["out/"+d.Name()], outputs["out/ (name) "+d.Name()] = b, []byte(d.Name())
		return nil
	})
	for _, f := range []string{"result.json", "report.html"} {
		if _, ok := outputs["out/"+f]; !ok {
			t.Errorf("--out holds no %s", f)
		}
	}
	for name, b := range outputs {
		for _, secret := range []string{testsite.PortalPassword, testsite.PortalUser} {
			// The storage state is the site's own cookies and localStorage,
			// whole: the portal keeps the user's name there, as sites do.
			if name == "state.json" && secret == testsite.PortalUser {
				continue
			}
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret %q", name, secret)
			}
		}
	}
	// What the model read names the secrets; the cassette is the prompts
	// (JSON, where < is escaped).
	if !bytes.Contains(outputs["calls.jsonl"], []byte("secret:portal_password")) {
		t.Error("the prompts do not name the password's placeholder")
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the storage state saved: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	// The run replays offline, signed in: its pages from the HAR (which
	// holds no cookie values), its calls from the cassette (which holds
	// the placeholders), the secrets typed and matched by name.
	replayed := writeFile(t, dir, "replayed.yaml", loginTask(srv.URL, "127.0.0.1")+"replay: run.har\ncassette: calls.jsonl\n")
	rr := runBinary(t, portalEnv, "run", replayed)
	if rr.code != exitOK || strings.Contains(rr.stderr, "missed") {
		t.Errorf("the replay: exit %d\nstdout:\n%.3000s\nstderr:\n%s", rr.code, rr.stdout, rr.stderr)
	}
	if portal.Logins() != 1 {
		t.Errorf("the replay reached the site: %d logins", portal.Logins())
	}

	// The state saved starts a second run signed in; without it, the same
	// task starts at the login form.
	home := writeFile(t, dir, "home.yaml", homeTask(srv.URL, ""))
	again := runBinary(t, nil, "run", home, "--storage-state", state)
	if again.code != exitOK {
		t.Errorf("run from the saved state: exit %d\nstderr:\n%s", again.code, again.stderr)
	}
	if cold := runBinary(t, nil, "run", home); cold.code != exitFailed {
		t.Errorf("run with no state: exit %d, want 1 (the login form, not the portal)\nstderr:\n%s", cold.code, cold.stderr)
	}
	if portal.Logins() != 1 {
		t.Errorf("%d logins: the second run signed in again", portal.Logins())
	}
}

// A file in Playwright's format, written by hand, starts a run signed in;
// its cookie for an outside domain is not loaded, and the result counts
// it.
func TestRunStartsFromAPlaywrightStorageState(t *testing.T) {
	t.Parallel()
	srv, _ := portalSite(t)
	dir := t.TempDir()
	state := writeFile(t, dir, "state.json", fmt.Sprintf(`{
  "cookies": [
    {"name": %q, "value": %q, "domain": "127.0.0.1", "path": "/portal/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"},
    {"name": "tracker", "value": "x", "domain": ".evil.example", "path": "/", "expires": 1893456000, "httpOnly": false, "secure": true, "sameSite": "None"}
  ],
  "origins": [{"origin": "http://evil.example", "localStorage": [{"name": "k", "value": "v"}]}]
}`, testsite.PortalCookie, testsite.PortalStateSession))
	task := writeFile(t, dir, "home.yaml", homeTask(srv.URL, "state.json"))
	r := runBinary(t, nil, "run", task)
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, "stdout", []byte(r.stdout))
	if res.StorageDropped != 2 {
		t.Errorf("storage_dropped %d, want 2 (the outside cookie and origin)", res.StorageDropped)
	}
	_ = state
}

// A secret is typed on its own domains only: elsewhere the step is
// refused, says why, and nothing reaches the site; a secret with no value
// is a task error naming it, never an empty password typed.
func TestRunSecretsKeepToTheirDomains(t *testing.T) {
	t.Parallel()
	srv, portal := portalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "elsewhere.yaml", loginTask(srv.URL, "localhost"))
	r := runBinary(t, portalEnv, "run", task)
	res := decodeResult(t, "stdout", []byte(r.stdout))
	if r.code != exitFailed || portal.Logins() != 0 || !strings.Contains(res.Reason, "portal_password") {
		t.Errorf("exit %d, %d logins, reason %q: want 1, none, and the secret named", r.code, portal.Logins(), res.Reason)
	}
	if strings.Contains(r.stdout+r.stderr, testsite.PortalPassword) {
		t.Error("the password reached the output")
	}

	missing := runBinary(t, []string{"PORTAL_USER=" + testsite.PortalUser}, "run", writeFile(t, dir, "login.yaml", loginTask(srv.URL, "127.0.0.1")))
	if missing.code != exitUsage || !strings.Contains(missing.stderr, "secrets.portal_password") || !strings.Contains(missing.stderr, "$PORTAL_PASSWORD") {
		t.Errorf("missing secret: exit %d, stderr:\n%s", missing.code, missing.stderr)
	}
	if portal.Logins() != 0 {
		t.Error("a login reached the site")
	}
}
