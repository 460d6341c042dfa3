package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// countingSite serves pages with serve, and counts the requests by the host
// each named (127.0.0.1, or localhost: another site on the same server).
func countingSite(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, port string)) (*httptest.Server, func(host string) int) {
	var mu sync.Mutex
	hosts := map[string]int{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, _ := strings.Cut(r.Host, ":")
		mu.Lock()
		hosts[host]++
		mu.Unlock()
		w.Header().Set("content-type", "text/html")
		serve(w, r, port)
	}))
	t.Cleanup(s.Close)
	return s, func(host string) int {
		mu.Lock()
		defer mu.Unlock()
		return hosts[host]
	}
}

// tabSite serves pages that open tabs: a target=_blank link, a sign-in
// popup that tells its opener who signed in and closes, two links to
// tabs, a button that opens a window on another host.
func tabSite(t *testing.T) (*httptest.Server, func(host string) int) {
	return countingSite(t, func(w http.ResponseWriter, r *http.Request, port string) {
		page := func(title, body string) {
			fmt.Fprintf(w, "<!doctype html><title>%s</title><body><h1>%s</h1>%s</body>", title, title, body)
		}
		switch r.URL.Path {
		case "/list":
			page("Orders", `<a href="/details" target="_blank">Order 7 details</a>`)
		case "/details":
			page("Order 7", `<p>Status: shipped</p>`)
		case "/account":
			page("Account", `<p id=who>Not signed in.</p><button onclick="window.open('/signin', 'signin', 'popup')">Sign in</button>
<script>addEventListener('message', e => { if (e.origin === location.origin) document.getElementById('who').textContent = 'Signed in as ' + e.data + '.' })</script>`)
		case "/signin":
			page("Sign in", `<button onclick="opener.postMessage('ada', location.origin); window.close()">Sign in as ada</button>`)
		case "/many":
			page("Many", `<a href="/details?n=1" target="_blank">One</a> <a href="/details?n=2" target="_blank">Two</a>`)
		case "/away":
			page("Away", `<button onclick="window.open('http://localhost:`+port+`/details?from=away')">Open the partner</button>`)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestTabsAreFollowedSwitchedAndClosed(t *testing.T) {
	t.Parallel()
	s, _ := tabSite(t)
	ctx := ctxT(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Tabs: 4})
	if _, err := p.Navigate(ctx, s.URL+"/list"); err != nil {
		t.Fatal(err)
	}
	out, err := p.Do(ctx, Click(CSS("a")))
	if err != nil || out.Effect != Navigated || !strings.HasSuffix(out.URL, "/details") || out.Detail != "opened in a new tab" {
		t.Fatalf("the link opening a tab: %+v, %v", out, err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Tabs) != 2 || !snap.Tabs[1].Current || snap.Tabs[0].Title != "Orders" || !strings.Contains(snap.Text, "shipped") {
		t.Fatalf("the snapshot after it: tabs %+v, text %q", snap.Tabs, snap.Text)
	}
	if out, err := p.Do(ctx, SwitchTab(1)); err != nil || !strings.HasSuffix(out.URL, "/list") {
		t.Fatalf("switch to tab 1: %+v, %v", out, err)
	}
	if _, err := p.Do(ctx, CloseTab()); err == nil {
		t.Fatal("the run's first tab closed")
	}
	if _, err := p.Do(ctx, SwitchTab(3)); err == nil || !strings.Contains(err.Error(), "there is no tab 3: 2 tabs open") {
		t.Fatalf("switch to a tab that is not open: %v", err)
	}
	if _, err := p.Do(ctx, SwitchTab(2)); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Do(ctx, CloseTab()); err != nil || !strings.HasSuffix(out.URL, "/list") {
		t.Fatalf("close tab 2: %+v, %v", out, err)
	}
	if snap, err := p.Observe(ctx); err != nil || len(snap.Tabs) != 0 || snap.Title != "Orders" {
		t.Fatalf("back on the first tab alone: %+v, %v", snap, err)
	}
}

// A sign-in popup that posts to its opener and closes itself leaves the
// run on its opener, which shows what it was told.
func TestAPopupThatClosesItselfReturnsToItsOpener(t *testing.T) {
	t.Parallel()
	s, _ := tabSite(t)
	ctx := ctxT(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Tabs: 4})
	if _, err := p.Navigate(ctx, s.URL+"/account"); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Do(ctx, Click(CSS("button"))); err != nil || !strings.HasSuffix(out.URL, "/signin") {
		t.Fatalf("the popup: %+v, %v", out, err)
	}
	out, err := p.Do(ctx, Click(CSS("button")))
	if err != nil || !strings.HasSuffix(out.URL, "/account") || !strings.Contains(out.Detail, "closed itself") {
		t.Fatalf("signing in: %+v, %v", out, err)
	}
	if text, err := p.ExtractPage(ctx); err != nil || !strings.Contains(text, "Signed in as ada.") {
		t.Fatalf("the opener: %q, %v", text, err)
	}
}

// Tabs beyond the count, and tabs to hosts outside the allowed domains,
// are closed and named; the outside host is never reached.
func TestTabsBeyondTheCountOrTheDomainsAreClosed(t *testing.T) {
	t.Parallel()
	s, hits := tabSite(t)
	ctx := ctxT(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Tabs: 2})
	if _, err := p.Navigate(ctx, s.URL+"/many"); err != nil {
		t.Fatal(err)
	}
	for i, link := range []string{`a[href$="n=1"]`, `a[href$="n=2"]`} {
		if _, err := p.Do(ctx, SwitchTab(1)); err != nil {
			t.Fatal(err)
		}
		out, err := p.Do(ctx, Click(CSS(link)))
		if err != nil || (i == 0) != (out.Detail == "opened in a new tab") {
			t.Fatalf("link %d: %+v, %v", i+1, out, err)
		}
	}
	if closed := p.ClosedTabs(); len(closed) != 1 || !strings.HasSuffix(closed[0], "n=2") {
		t.Errorf("the second tab, beyond the count, is not the one closed: %v", closed)
	}

	p = open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Tabs: 4})
	if _, err := p.Navigate(ctx, s.URL+"/away"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(ctx, Click(CSS("button"))); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.ClosedTabs(), func(u string) bool { return strings.Contains(u, "from=away") }) {
		t.Errorf("the tab to another host is not named closed: %v", p.ClosedTabs())
	}
	if n := hits("localhost"); n != 0 {
		t.Errorf("the outside host was reached %d times", n)
	}
}

// frameSite serves a checkout on one host whose card form is a frame from
// another (localhost, another site than 127.0.0.1).
func frameSite(t *testing.T) (*httptest.Server, func(host string) int) {
	return countingSite(t, func(w http.ResponseWriter, r *http.Request, port string) {
		switch r.URL.Path {
		case "/checkout":
			fmt.Fprintf(w, `<!doctype html><title>Checkout</title><h1>Checkout</h1><iframe src="http://localhost:%s/pay"></iframe><button>Back</button>`, port)
		case "/pay":
			fmt.Fprint(w, `<!doctype html><title>Pay</title><label for=c>Card number</label><input id=c><button onclick="document.body.textContent = 'Payment accepted'">Pay</button>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// A frame from another allowed host is read in place and acted on; one
// from a host outside the allowed domains is refused, noted, never read.
func TestFramesOfOtherHosts(t *testing.T) {
	t.Parallel()
	s, hits := frameSite(t)
	ctx := ctxT(t)

	p := open(t, Options{AllowedDomains: []string{"127.0.0.1", "localhost"}})
	if _, err := p.Navigate(ctx, s.URL+"/checkout"); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	card := slices.IndexFunc(snap.Elements, func(e Element) bool { return e.Name == "Card number" })
	pay := slices.IndexFunc(snap.Elements, func(e Element) bool { return e.Name == "Pay" })
	if card < 0 || pay < 0 || len(snap.RefusedFrames) != 0 {
		t.Fatalf("the frame's elements are not in the snapshot: %+v (refused %v)", snap.Elements, snap.RefusedFrames)
	}
	if out, err := p.Do(ctx, TypeInto(snap.Index(card), "4242 4242 4242 4242", false)); err != nil || out.Effect != Changed {
		t.Fatalf("typing into the frame: %+v, %v", out, err)
	}
	if out, err := p.Do(ctx, Click(snap.Index(pay))); err != nil || out.Effect != Changed {
		t.Fatalf("paying in the frame: %+v, %v", out, err)
	}
	if text, err := p.ExtractPage(ctx); err != nil || !strings.Contains(text, "Payment accepted") {
		t.Fatalf("the page's text holds not the frame's: %q, %v", text, err)
	}

	before := hits("localhost")
	q := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	if _, err := q.Navigate(ctx, s.URL+"/checkout"); err != nil {
		t.Fatal(err)
	}
	snap, err = q.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.RefusedFrames) != 1 || !strings.Contains(snap.RefusedFrames[0], "localhost") || slices.ContainsFunc(snap.Elements, func(e Element) bool { return e.Name == "Card number" }) {
		t.Fatalf("the refused frame: refused %v, elements %+v", snap.RefusedFrames, snap.Elements)
	}
	if n := hits("localhost") - before; n != 0 {
		t.Errorf("the refused frame's host was reached %d times", n)
	}
}
