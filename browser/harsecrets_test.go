package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser/replay"
)

// harSecret is typed into a GET form, then moved by the page and its
// server everywhere a request or a response can carry a value.
const harSecret = "Kestrel-5581-Meadow"

// echoSite serves a GET form whose answer moves the value it was sent
// everywhere but a body: into the URL path and query of requests its
// script makes, a custom request header, a redirect's Location, a
// response header and a cookie. It counts the requests that carried the
// value, so a test knows the value really travelled.
type echoSite struct {
	*httptest.Server
	mu      sync.Mutex
	carried map[string]bool // where the server saw the value
}

func (s *echoSite) saw(where string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.carried[where] = true
}

func (s *echoSite) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.carried {
		out = append(out, k)
	}
	return out
}

func newEchoSite(t *testing.T) *echoSite {
	t.Helper()
	s := &echoSite{carried: map[string]bool{}}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>Echo</title>"+body)
	}
	mux.HandleFunc("GET /form", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<h1>Find</h1><form action="/echo"><label>Code <input id="v" name="v"></label>
<label>User <input id="user" name="user" value="ada"></label><button>Go</button></form>`)
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("v")
		if v == harSecret {
			s.saw("query")
		}
		w.Header().Set("X-Echo", strings.ToUpper(v))
		http.SetCookie(w, &http.Cookie{Name: "echo", Value: url.QueryEscape(v), Path: "/"})
		js := url.PathEscape(v)
		page(w, `<h1>Found</h1><p style="text-transform:uppercase">code `+v+`</p>
<script>
const v = decodeURIComponent("`+js+`");
fetch("/api/" + encodeURIComponent(v), {headers: {"X-Custom": v}});
fetch("/q?x=" + encodeURIComponent(v.toLowerCase()));
fetch("/redir?to=" + encodeURIComponent(v));
</script>`)
	})
	mux.HandleFunc("GET /api/{v}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("v") == harSecret {
			s.saw("path")
		}
		if r.Header.Get("X-Custom") == harSecret {
			s.saw("request header")
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("GET /q", func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.URL.Query().Get("x"), harSecret) {
			s.saw("script's query")
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("GET /redir", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landing/"+url.PathEscape(r.URL.Query().Get("to")), http.StatusFound)
	})
	mux.HandleFunc("GET /landing/{v}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("v") == harSecret {
			s.saw("redirect")
		}
		fmt.Fprint(w, "ok")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// The HAR holds a typed secret nowhere, wherever the page moved it: not
// in a URL's path or query, a header of either side, a cookie or a
// redirect; and what the page shows of it, upper-cased, is its name.
func TestTheHARHoldsNoSecretWhereverThePageMovesIt(t *testing.T) {
	t.Parallel()
	site := newEchoSite(t)
	rec := replay.NewRecorder(time.Now(), replay.DefaultRedactor(), "headroom", "test")
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Secrets: []Secret{{Name: "code", Value: harSecret}}, Record: rec})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Type(ctx, CSS("#v"), Placeholder("code"), true); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait(ctx, WaitNetworkQuiet, 10*time.Second)
	snap := observe(t, p)
	p.drain(ctx, 5*time.Second)
	if !strings.Contains(snap.String(), "<secret:code>") || strings.Contains(strings.ToLower(snap.String()), strings.ToLower(harSecret)) {
		t.Errorf("the page shows the value upper-cased; the snapshot should name it:\n%s", snap)
	}
	path, m := writeAndMatch(t, rec, "echo.har")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	har := strings.ToLower(string(b))
	for _, form := range []string{harSecret, url.QueryEscape(harSecret), strings.ReplaceAll(harSecret, "-", "%2D")} {
		if n := strings.Count(har, strings.ToLower(form)); n > 0 {
			i := strings.Index(har, strings.ToLower(form))
			t.Errorf("the HAR holds the secret (%q) %d times, first at …%s…", form, n, string(b[max(0, i-120):min(len(b), i+40)]))
		}
	}
	// The recording still replays: the form's request, made with the value
	// in it, is scrubbed as the recording was before it is matched. (The
	// page's script, replayed, holds the value's placeholder where the
	// live one held the value, so what it sends is the recording's no
	// more.)
	r := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Secrets: []Secret{{Name: "code", Value: harSecret}}, Replay: m})
	if _, err := r.Navigate(ctx, site.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Type(ctx, CSS("#v"), Placeholder("code"), true); err != nil {
		t.Fatal(err)
	}
	_ = r.Wait(ctx, WaitNetworkQuiet, 10*time.Second)
	for _, miss := range m.Stats().Missed {
		if strings.Contains(miss, "/echo") || strings.Contains(miss, "/form") {
			t.Errorf("the replay missed %s", miss)
		}
	}
	if m.Stats().Served < 2 {
		t.Errorf("the replay served %d requests, want the form and its answer", m.Stats().Served)
	}
	// The control: each way out was really taken, so a value left in the
	// HAR would have been seen above.
	for _, where := range []string{"query", "path", "request header", "script's query", "redirect"} {
		found := false
		for _, s := range site.seen() {
			found = found || s == where
		}
		if !found {
			t.Errorf("the site never received the value by its %s: the test proves nothing there (saw %v)", where, site.seen())
		}
	}
}
