package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
)

// secretValue is a canary: it must reach the login server and nothing
// else.
const secretValue = "pelican-7731-Harbour"

// loginSite serves a login form at /login with a user field, a note (a
// text field) and a password field; a POST shows a page that echoes the
// note in its text, in a link and in a field, as a careless site does.
type loginSite struct {
	*httptest.Server
	mu  sync.Mutex
	got []url.Values
}

func (s *loginSite) received() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.got...)
}

func newLoginSite(t *testing.T) *loginSite {
	t.Helper()
	s := &loginSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<form method="post" action="/login">
<label>User <input id="user" name="user"></label>
<label>Note <input id="note" name="note"></label>
<label>Password <input id="pw" name="pw1" type="password"></label>
<button id="go">Sign in</button>
</form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		s.got = append(s.got, r.PostForm)
		s.mu.Unlock()
		note := html.EscapeString(r.PostForm.Get("note"))
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>Welcome</title><h1>Welcome</h1>
<p>Your note: %s</p><a href="/notes?q=%s">%s</a><input id="again" value="%s">`, note, url.QueryEscape(r.PostForm.Get("note")), note, note)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func pwSecret(domains ...string) []Secret {
	return []Secret{{Name: "pw", Value: secretValue, Domains: domains}}
}

// logIn types the user, the placeholder into the note (a text field) and
// into the password field, and submits.
func logIn(t *testing.T, p *Page, base string) []Outcome {
	t.Helper()
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, base+"/login"); err != nil {
		t.Fatal(err)
	}
	var outs []Outcome
	for _, a := range []Action{
		TypeInto(CSS("#user"), "ada", false),
		TypeInto(CSS("#note"), "note "+Placeholder("pw"), false),
		TypeInto(CSS("#pw"), Placeholder("pw"), true),
	} {
		out, err := p.Do(ctx, a)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		outs = append(outs, out)
	}
	_ = p.Wait(ctx, WaitNetworkQuiet, 5*time.Second)
	return outs
}

func TestSecretsAreTypedByPlaceholderAndShownByName(t *testing.T) {
	t.Parallel()
	site := newLoginSite(t)
	rec := replay.NewRecorder(time.Now(), replay.DefaultRedactor(), "headroom", "test")
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Secrets: pwSecret(), Record: rec})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	out, err := p.Type(ctx, CSS("#note"), "note "+Placeholder("pw"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Secret {
		t.Error("typing a secret into a text field: Outcome.Secret not set")
	}
	// Before it is sent: the field's value, seen by name.
	snap := observe(t, p)
	checkHidden(t, "the form's snapshot", snap.String())
	if !strings.Contains(snap.String(), `value="note <secret:pw>"`) {
		t.Errorf("the note field does not show the placeholder:\n%s", snap)
	}
	if v, err := p.Extract(ctx, CSS("#note")); err != nil || v != "note "+Placeholder("pw") {
		t.Errorf("Extract of the note = %q, %v; want the placeholder", v, err)
	}

	outs := logIn(t, p, site.URL)
	for i, o := range outs[1:] {
		if !o.Secret {
			t.Errorf("outcome %d: Secret not set", i+2)
		}
	}
	if outs[0].Secret {
		t.Error("typing a plain user name set Outcome.Secret")
	}
	got := site.received()
	if len(got) != 1 || got[0].Get("pw1") != secretValue || got[0].Get("note") != "note "+secretValue || got[0].Get("user") != "ada" {
		t.Fatalf("the server received %v; want the secret's value in pw1 and note", got)
	}

	// After: the page echoes it in its text, a link and a field.
	snap = observe(t, p)
	shown := snap.String() + "\n" + snap.Text
	for _, e := range snap.Elements {
		shown += "\n" + e.Href + " " + e.Name + " " + e.Value
	}
	checkHidden(t, "the welcome page's snapshot", shown)
	if !strings.Contains(snap.Text, "Your note: note <secret:pw>") {
		t.Errorf("the page text does not name the secret:\n%s", snap.Text)
	}
	text, err := p.ExtractPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHidden(t, "ExtractPage", text)
	if !strings.Contains(text, "note <secret:pw>") {
		t.Errorf("ExtractPage does not name the secret:\n%s", text)
	}
	if u, err := p.URL(ctx); err != nil || strings.Contains(u, secretValue) {
		t.Errorf("URL = %q, %v", u, err)
	}

	// The HAR holds no value, in any form.
	p.drain(ctx, 5*time.Second)
	har, err := json.Marshal(rec.Archive())
	if err != nil {
		t.Fatal(err)
	}
	checkHidden(t, "the HAR", string(har))
	if !strings.Contains(string(har), "POST") {
		t.Fatalf("the HAR holds no POST:\n%s", har)
	}

	// Replayed with the same secret, the login matches what was recorded.
	_, m := writeAndMatch(t, rec, "login.har")
	rp := open(t, Options{Replay: m, AllowedDomains: []string{"127.0.0.1"}, Secrets: pwSecret()})
	logIn(t, rp, site.URL)
	if st := m.Stats(); st.Misses != 0 {
		t.Errorf("the replay missed %d requests: %+v", st.Misses, st)
	}
	rs := observe(t, rp)
	if !strings.Contains(rs.Title, "Welcome") {
		t.Errorf("the replayed login did not reach the welcome page: %s", rs)
	}
	if n := len(site.received()); n != 1 {
		t.Errorf("the replay reached the server: %d logins", n)
	}
}

// checkHidden fails when s holds the secret's value, as it is or encoded.
func checkHidden(t *testing.T, what, s string) {
	t.Helper()
	for _, f := range []string{secretValue, url.QueryEscape(secretValue), strings.ToLower(secretValue)} {
		if strings.Contains(s, f) {
			t.Errorf("%s holds the secret's value:\n%s", what, s)
			return
		}
	}
}

func TestSecretsAreTypedOnlyOnTheirDomains(t *testing.T) {
	t.Parallel()
	site := newLoginSite(t)
	p := open(t, Options{
		AllowedDomains: []string{"127.0.0.1"},
		Secrets:        append(pwSecret("example.com"), Secret{Name: "pin", Value: "4096-3321"}),
	})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	_, err := p.Type(ctx, CSS("#note"), "x "+Placeholder("pw"), true)
	if !errors.Is(err, ErrSecretDomain) {
		t.Fatalf("typing a secret of example.com on 127.0.0.1: %v; want ErrSecretDomain", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pw") || !strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, secretValue) {
		t.Errorf("the error should name the secret and the host, never the value: %s", msg)
	}
	if v, _ := p.Extract(ctx, CSS("#note")); v != "" {
		t.Errorf("something was typed: %q", v)
	}
	if n := len(site.received()); n != 0 {
		t.Errorf("the form was sent %d times", n)
	}

	// A secret without domains is typed on the page's allowed domains.
	if _, err := p.Type(ctx, CSS("#note"), Placeholder("pin"), false); err != nil {
		t.Fatalf("a secret on the allowed domains: %v", err)
	}

	// An unknown name is an error naming it, and types nothing.
	_, err = p.Type(ctx, CSS("#user"), Placeholder("nope"), false)
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "pw, pin") {
		t.Errorf("an unknown placeholder: %v", err)
	}
	if v, _ := p.Extract(ctx, CSS("#user")); v != "" {
		t.Errorf("an unknown placeholder typed %q", v)
	}
}

func TestASecretWithoutDomainsOnAnUnconfinedPageIsRefused(t *testing.T) {
	t.Parallel()
	site := newLoginSite(t)
	p := open(t, Options{Secrets: pwSecret()})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Type(ctx, CSS("#pw"), Placeholder("pw"), false); !errors.Is(err, ErrSecretDomain) {
		t.Fatalf("got %v; want ErrSecretDomain", err)
	}
	if v, _ := callValue(t, p, "#pw"); v != "" {
		t.Errorf("the password field holds %d characters", len(v))
	}
}

// callValue reads a field's value, a password's included.
func callValue(t *testing.T, p *Page, sel string) (string, error) {
	t.Helper()
	return chromedp.Run(p.first.ctx, chromedp.Evaluate[string](fmt.Sprintf("document.querySelector(%q).value", sel)))
}

func TestSecretsThatCannotBeKeptAreRefusedAtOpen(t *testing.T) {
	for _, s := range [][]Secret{
		{{Name: "", Value: secretValue}},
		{{Name: "a b", Value: secretValue}},
		{{Name: "pw", Value: "abc"}},
		{{Name: "pw", Value: secretValue}, {Name: "pw", Value: secretValue + "2"}},
		{{Name: "pw", Value: secretValue, Domains: []string{"http://x.example/"}}},
	} {
		if err := (&Options{Secrets: s}).check(); !errors.Is(err, ErrLaunch) {
			t.Errorf("%d secrets: %v; want ErrLaunch", len(s), err)
		} else if strings.Contains(err.Error(), secretValue) {
			t.Errorf("the error holds the value: %v", err)
		}
	}
}
