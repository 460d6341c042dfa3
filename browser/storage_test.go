package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sessionSite sets a session cookie and a localStorage item on /login,
// and shows on /home the cookies it was sent and what localStorage holds.
func sessionSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "portal", Value: "ada-session-42", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>In</title><p>Signed in</p><script>localStorage.setItem('user', 'ada')</script>`)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		var cs []string
		for _, c := range r.Cookies() {
			cs = append(cs, c.Name+"="+c.Value)
		}
		fmt.Fprintf(w, `<!doctype html><title>Home</title><p id="c">%s</p><p id="ls"></p>
<script>document.getElementById('ls').textContent = 'user=' + localStorage.getItem('user') + ' theme=' + localStorage.getItem('theme')</script>`, strings.Join(cs, "; "))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// home loads /home and returns the cookies it was sent and what its
// localStorage holds.
func home(t *testing.T, p *Page, base string) (cookies, local string) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, base+"/home"); err != nil {
		t.Fatal(err)
	}
	c, err := p.Extract(ctx, CSS("#c"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Extract(ctx, CSS("#ls"))
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

func TestStorageStateIsSavedAndLoadedInANewBrowser(t *testing.T) {
	t.Parallel()
	site := sessionSite(t)
	allowed := []string{"127.0.0.1"}
	p := open(t, Options{AllowedDomains: allowed})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	st, err := p.StorageState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Cookies) != 1 || st.Cookies[0].Name != "portal" || st.Cookies[0].Value != "ada-session-42" ||
		st.Cookies[0].Expires != -1 || !st.Cookies[0].HTTPOnly || st.Cookies[0].SameSite != "Lax" || st.Cookies[0].Domain != "127.0.0.1" {
		t.Errorf("cookies saved: %+v", st.Cookies)
	}
	if len(st.Origins) != 1 || st.Origins[0].Origin != site.URL || len(st.Origins[0].LocalStorage) != 1 ||
		st.Origins[0].LocalStorage[0] != (NameValue{"user", "ada"}) {
		t.Errorf("origins saved: %+v", st.Origins)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := st.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadStorageState(path)
	if err != nil {
		t.Fatal(err)
	}

	q := open(t, Options{AllowedDomains: allowed, StorageState: loaded})
	if n := q.StorageDropped(); n != 0 {
		t.Errorf("StorageDropped = %d", n)
	}
	cookies, local := home(t, q, site.URL)
	if cookies != "portal=ada-session-42" {
		t.Errorf("the new browser sent cookies %q", cookies)
	}
	if local != "user=ada theme=null" {
		t.Errorf("the new browser's localStorage: %q", local)
	}
}

// A file written by hand in Playwright's format, as another tool saves
// it: a session cookie, one that expires, an origin's localStorage, and
// a cookie and an origin outside the allowed domains.
const playwrightState = `{
  "cookies": [
    {"name": "portal", "value": "hand-written-7", "domain": "127.0.0.1", "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"},
    {"name": "pref", "value": "dark", "domain": "127.0.0.1", "path": "/", "expires": %d, "httpOnly": false, "secure": false, "sameSite": "Strict"},
    {"name": "track", "value": "evil-1", "domain": ".evil.example", "path": "/", "expires": -1, "httpOnly": false, "secure": true, "sameSite": "None"}
  ],
  "origins": [
    {"origin": "%s", "localStorage": [{"name": "user", "value": "grace"}, {"name": "theme", "value": "dark"}]},
    {"origin": "https://evil.example", "localStorage": [{"name": "x", "value": "y"}]}
  ]
}`

func TestAPlaywrightStorageStateLoadsWithinTheAllowedDomains(t *testing.T) {
	t.Parallel()
	site := sessionSite(t)
	st, err := ParseStorageState("state.json", fmt.Appendf(nil, playwrightState, time.Now().Add(time.Hour).Unix(), site.URL))
	if err != nil {
		t.Fatal(err)
	}
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, StorageState: st})
	if n := p.StorageDropped(); n != 2 {
		t.Errorf("StorageDropped = %d; want 2 (evil.example's cookie and origin)", n)
	}
	cookies, local := home(t, p, site.URL)
	if cookies != "portal=hand-written-7; pref=dark" && cookies != "pref=dark; portal=hand-written-7" {
		t.Errorf("cookies sent: %q", cookies)
	}
	if local != "user=grace theme=dark" {
		t.Errorf("localStorage: %q", local)
	}
	// What the page changes stays: the state is loaded once a tab.
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.URL+"/login"); err != nil { // sets user=ada
		t.Fatal(err)
	}
	if _, local = home(t, p, site.URL); local != "user=ada theme=dark" {
		t.Errorf("after the page set user, localStorage: %q", local)
	}
	saved, err := p.StorageState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range saved.Cookies {
		if strings.Contains(c.Domain, "evil") {
			t.Errorf("saved a cookie of %s", c.Domain)
		}
		if c.Name == "pref" && (c.Expires < float64(time.Now().Unix()) || c.SameSite != "Strict") {
			t.Errorf("the expiring cookie came back as %+v", c)
		}
	}
	if len(saved.Cookies) != 2 {
		t.Errorf("saved cookies: %+v", saved.Cookies)
	}
}

func TestStorageStateWithin(t *testing.T) {
	st := &StorageState{
		Cookies: []Cookie{{Name: "a", Domain: ".example.com"}, {Name: "b", Domain: "shop.example.com"}, {Name: "c", Domain: "evil.example"}, {Name: "d", Domain: "example.com.evil.example"}},
		Origins: []OriginState{{Origin: "https://www.example.com"}, {Origin: "http://127.0.0.1:8080"}, {Origin: "https://evil.example"}},
	}
	kept, dropped := st.Within([]string{"example.com"})
	if len(kept.Cookies) != 2 || kept.Cookies[0].Name != "a" || kept.Cookies[1].Name != "b" || len(kept.Origins) != 1 || dropped != 4 {
		t.Errorf("kept %+v, dropped %d", kept, dropped)
	}
	if kept, dropped := st.Within(nil); len(kept.Cookies)+len(kept.Origins) != 0 || dropped != 7 {
		t.Errorf("no domains kept %+v", kept)
	}
}

func TestStorageStateWriteFile(t *testing.T) {
	dir := t.TempDir()
	st := &StorageState{Cookies: []Cookie{{Name: "s", Value: "v", Domain: "example.com", Path: "/", Expires: -1}}}
	path := filepath.Join(dir, "state.json")
	if err := st.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"origins": []`) || !strings.Contains(string(data), `"sameSite": ""`) {
		t.Errorf("not Playwright's shape:\n%s", data)
	}
	back, err := LoadStorageState(path)
	if err != nil || len(back.Cookies) != 1 || back.Cookies[0] != st.Cookies[0] {
		t.Errorf("read back %+v, %v", back, err)
	}

	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFile(link); err == nil {
		t.Error("wrote through a symlink")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was changed: %q", b)
	}
	if _, err := LoadStorageState(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("loading a directory: %v", err)
	}
	if _, err := LoadStorageState(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("loading a missing file: %v", err)
	}
}

func TestParseStorageStateErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"", "empty"},
		{"{\n  \"cookies\": [\n    {\"name\": \"s\", \"value\": \"hunter2-secret\" \"domain\": \"x\"}\n  ]\n}", "state.json:3: not valid JSON"},
		{`{"cookies": [{"name": "s", "value": "hunter2-secret", "domain": "x", "expires": "soon"}]}`, "state.json:1: cookies.expires is a JSON string: want a number"},
		{`{"cookies": {"name": "s"}}`, "want an array"},
		{`{"cookies": [{"name": "s", "value": "hunter2-secret", "domain": "x", "sameSite": "lax"}]}`, "sameSite is not Strict, Lax or None"},
		{`{"cookies": [{"name": "s", "value": "hunter2-secret"}]}`, "state.json:1: cookies[0].domain is empty"},
		{`{"origins": [{"origin": "hunter2-secret"}]}`, "state.json:1: origins[0].origin is not scheme://host"},
		{`{"cookies": []} {}`, "more than one JSON value"},
		{`{"cookies": [{"name": "s", "value": "hunter2-secret`, "ends before the JSON does"},
		{strings.Repeat("[", 40), "nested"},
	} {
		_, err := ParseStorageState("state.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "state.json") {
			t.Errorf("%.40q: %v; want %q", c.data, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes a value: %v", err)
		}
	}
}

func FuzzParseStorageState(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(playwrightState, 1999999999, "http://127.0.0.1:8391")))
	f.Add([]byte(`{"cookies":[],"origins":[]}`))
	f.Add([]byte(`{"cookies":[{"name":"a","domain":".x.com","expires":1e308}]}`))
	f.Add([]byte(`[`))
	// Cookies Chrome refuses, and some it takes.
	for _, c := range []string{
		`{"name":"a;b","value":"v","domain":"x.com"}`,
		`{"name":"a=b","value":"v","domain":"x.com"}`,
		`{"name":"s","value":"a\r\nSet-Cookie: b=c","domain":"x.com"}`,
		`{"name":"s","value":"a\u0000b","domain":"x.com"}`,
		`{"name":"s","value":"a\tb","domain":"x.com"}`,
		`{"name":"s","value":" v","domain":"x.com"}`,
		`{"name":"s","value":"café au lait","domain":"x.com"}`,
		`{"name":"","value":"a=b","domain":"x.com"}`,
		`{"name":"","value":"","domain":"x.com"}`,
		`{"name":"__Host-s","value":"v","domain":".x.com","secure":true}`,
		`{"name":"__Http-s","value":"v","domain":"x.com","secure":true}`,
		`{"name":"s","value":"v","domain":"2130706433"}`,
		`{"name":"s","value":"v","domain":".0x7f.1"}`,
		`{"name":"s","value":"v","domain":"x.1"}`,
		`{"name":"s","value":"v","domain":"[::ffff:127.0.0.1]"}`,
		`{"name":"s","value":"v","domain":"x.com","path":"a"}`,
		`{"name":"s","value":"v","domain":"x.com","path":"/a\nb"}`,
		`{"name":"s","value":"v","domain":"x.com","sameSite":"lax"}`,
		`{"name":"s","value":"v","domain":"x.com","expires":1e400}`,
	} {
		f.Add([]byte(`{"cookies":[` + c + `]}`))
	}
	f.Add([]byte(`{"origins":[{"origin":"http://127.1:8391","localStorage":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStorageState("f.json", data)
		if err != nil {
			if strings.Count(err.Error(), "f.json") == 0 {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		// What is read is written back as it was read, and read again.
		again, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseStorageState("g.json", again); err != nil {
			t.Fatalf("a state read is refused once written back: %v", err)
		}
		kept, dropped := st.Within([]string{"x.com", "127.0.0.1"})
		if len(kept.Cookies)+len(kept.Origins)+dropped != len(st.Cookies)+len(st.Origins) {
			t.Fatalf("Within lost entries: %d kept + %d dropped of %d", len(kept.Cookies)+len(kept.Origins), dropped, len(st.Cookies)+len(st.Origins))
		}
	})
}
