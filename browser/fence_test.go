package browser

import (
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/hostile"
)

func corpus(t *testing.T) (*hostile.Corpus, []string) {
	t.Helper()
	c, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pages, err := hostile.Pages()
	if err != nil || len(pages) < 12 {
		t.Fatalf("the hostile corpus: %v pages, %v", len(pages), err)
	}
	return c, pages
}

// visit loads each page in one tab and gives what it starts time to run.
// A refused navigation is what some pages earn; any other failure is not.
func visit(t *testing.T, p *Page, c *hostile.Corpus, pages []string) {
	t.Helper()
	ctx := ctxT(t)
	for _, name := range pages {
		if _, err := p.Navigate(ctx, c.URL(name)); err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v", name, err)
		}
		sleep(ctx, 300*time.Millisecond) // timers, workers, prefetches
		if _, err := p.Observe(ctx); err != nil {
			t.Errorf("%s: observe: %v", name, err)
		}
	}
}

func reachedNothing(t *testing.T, c *hostile.Corpus, mode string) {
	t.Helper()
	conns, reqs, datagrams := c.Reached()
	if conns != 0 || len(reqs) != 0 || datagrams != 0 {
		t.Errorf("%s: the outside host saw %d connections, %d requests and %d UDP datagrams: %v", mode, conns, len(reqs), datagrams, reqs)
	}
}

// TestHostilePagesReachNoOtherHost loads every page of the corpus live,
// while recording, and replayed, with the run confined to the inside
// host: nothing may reach the outside host, and what was refused is
// counted.
func TestHostilePagesReachNoOtherHost(t *testing.T) {
	t.Parallel()
	c, pages := corpus(t)
	allow := []string{hostile.InsideHost}

	live := open(t, Options{AllowedDomains: allow})
	visit(t, live, c, pages)
	reachedNothing(t, c, "live")
	if n := len(live.Blocked()); n < len(pages) {
		t.Errorf("live: %d requests refused, want at least one a page (%d): %v", n, len(pages), live.Blocked())
	}
	tabs := live.ClosedTabs()
	for _, want := range []string{"/popup", "/blank-tab", "/sub/allowed.html"} {
		if !slices.ContainsFunc(tabs, func(u string) bool { return strings.Contains(u, want) }) {
			t.Errorf("live: no closed tab for %s among %v", want, tabs)
		}
	}

	// Tabs followed, frames read: the tabs on the inside host are kept,
	// the others closed, and still nothing reaches the outside.
	following := open(t, Options{AllowedDomains: allow, Tabs: 4})
	visit(t, following, c, pages)
	reachedNothing(t, c, "live, tabs followed")
	tabs = following.ClosedTabs()
	for _, want := range []string{"/popup", "/blank-tab"} {
		if !slices.ContainsFunc(tabs, func(u string) bool { return strings.Contains(u, want) }) {
			t.Errorf("live, tabs followed: no closed tab for %s among %v", want, tabs)
		}
	}
	if slices.ContainsFunc(tabs, func(u string) bool { return strings.Contains(u, "/sub/allowed.html") }) {
		t.Errorf("live, tabs followed: the inside host's tab was closed: %v", tabs)
	}
}

// TestHostilePagesRecordedAndReplayedReachNoOtherHost records the corpus
// and replays the recording: neither reaches the outside host, and the
// HAR holds only the inside host.
func TestHostilePagesRecordedAndReplayedReachNoOtherHost(t *testing.T) {
	t.Parallel()
	c, pages := corpus(t)
	allow := []string{hostile.InsideHost}

	rec := replay.NewRecorder(time.Now(), replay.DefaultRedactor(), "headroom", "test")
	recording := open(t, Options{AllowedDomains: allow, Record: rec})
	visit(t, recording, c, pages)
	recording.drain(ctxT(t), 5*time.Second)
	recording.Close()
	reachedNothing(t, c, "record")
	for _, e := range rec.Archive().Log.Entries {
		if u, err := url.Parse(e.Request.URL); err != nil || u.Hostname() != hostile.InsideHost {
			t.Errorf("record: the HAR holds %s", e.Request.URL)
		}
	}

	_, m := writeAndMatch(t, rec, "hostile.har")
	visit(t, open(t, Options{AllowedDomains: allow, Replay: m}), c, pages)
	reachedNothing(t, c, "replay")
}

func TestAllowlistMatchesNamesBySuffixAndAddressesExactly(t *testing.T) {
	a := newAllowlist([]string{"example.com", "127.0.0.1", "::1"}, false)
	for h, want := range map[string]bool{
		"example.com": true, "www.example.com": true, "EXAMPLE.COM.": true,
		"badexample.com": false, "example.com.evil.io": false,
		"127.0.0.1": true, "127.0.0.2": false, "[::1]": true, "0:0:0:0:0:0:0:1": true,
		"10.127.0.0.1": false, "": false,
	} {
		if got := a.host(h); got != want {
			t.Errorf("host(%q) = %v, want %v", h, got, want)
		}
	}
	if !newAllowlist(nil, false).host("anything.example") {
		t.Error("an empty allowlist without a fence allows every host")
	}
	if newAllowlist(nil, true).host("127.0.0.1") {
		t.Error("an empty fenced allowlist (a replay) allows no host")
	}
	for u, want := range map[string]bool{
		"https://www.example.com/x": true, "data:text/html,hi": true, "about:blank": true,
		"http://127.0.0.2/": false, "file:///etc/passwd": false, "ws://example.com/s": true,
	} {
		if got := a.url(u); got != want {
			t.Errorf("url(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestCheckDomainRefusesWhatCouldWidenTheFence(t *testing.T) {
	for _, bad := range []string{"", " ", "1", "0.1", "0.0.1", "127.0.0", "*.example.com", "example.com:443",
		"http://example.com", "example..com", "-a.com", "a.com/x", "exa mple.com"} {
		if err := CheckDomain(bad); err == nil {
			t.Errorf("CheckDomain(%q) = nil, want an error", bad)
		}
	}
	for _, good := range []string{"example.com", ".example.com", "localhost", "127.0.0.1", "::1", "[::1]", "a-b.co.uk", "xn--bcher-kva.example"} {
		if err := CheckDomain(good); err != nil {
			t.Errorf("CheckDomain(%q) = %v", good, err)
		}
	}
}

func TestNavigateRefusesOtherSchemes(t *testing.T) {
	srv := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, srv.URL+"/shop/"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"file:///etc/passwd", "chrome://version", "data:text/html,<h1>hi</h1>", "javascript:alert(1)", "view-source:" + srv.URL} {
		_, err := p.Navigate(ctx, u)
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "--allow-scheme") {
			t.Errorf("Navigate(%q) = %v, want ErrBlocked naming --allow-scheme", u, err)
		}
	}
	snap, err := p.Observe(ctx)
	if err != nil || !strings.Contains(snap.URL, "/shop/") {
		t.Errorf("after refusals the page is %v (%v), want the shop still", snap, err)
	}
	allowed := open(t, Options{AllowSchemes: []string{"data"}})
	if _, err := allowed.Navigate(ctx, "data:text/html,<h1>hi</h1>"); err != nil {
		t.Errorf("with data allowed: %v", err)
	}
}

// FuzzCheckDomain: whatever CheckDomain accepts, an address is admitted
// only by itself, and a name only admits itself and its subdomains.
func FuzzCheckDomain(f *testing.F) {
	for _, s := range []string{"example.com", "1", "0.0.1", "127.0.0.1", "::1", "", ".a.b", "a..b", "xn--e1afmkfd.xn--p1ai", "1.2.3.4.5",
		"2130706433", "0x7f.1", "0x7f.0x1", "127.1", "127.0.0.1.", "0177.0.0.1", "shop.0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, d string) {
		if CheckDomain(d) != nil {
			return
		}
		a := newAllowlist([]string{d}, false)
		ip := net.ParseIP(strings.Trim(strings.TrimPrefix(d, "."), "[]"))
		for _, h := range []string{"127.0.0.1", "10.0.0.1", "::1", "evil.example"} {
			name := strings.ToLower(strings.Trim(d, "."))
			byName := ip == nil && net.ParseIP(h) == nil && (h == name || strings.HasSuffix(h, "."+name))
			if a.host(h) && (ip == nil || !ip.Equal(net.ParseIP(h))) && !byName {
				t.Errorf("allowing %q admits %s", d, h)
			}
		}
		if ip == nil && !a.host("www."+strings.TrimPrefix(d, ".")) {
			t.Errorf("allowing %q does not admit its subdomain", d)
		}
	})
}

// The UDP listener the fence tests count on does hear WebRTC: a browser
// launched with chromedp's defaults, without the fence's preferences or
// its guard, sends the corpus's WebRTC page's datagrams to the outside
// host. Without this, the fenced runs' zero could mean a deaf listener.
func TestTheListenerHearsAnUnfencedBrowsersWebRTC(t *testing.T) {
	t.Parallel()
	chrome, err := findChrome("")
	if err != nil {
		t.Skipf("no Chrome: %v", err)
	}
	c, _ := corpus(t)
	alloc, cancel := chromedp.NewExecAllocator(ctxT(t), append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome))...)
	defer cancel()
	ctx, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(c.URL("webrtc.html"))); err != nil {
		t.Fatalf("an unfenced browser did not load the page: %v", err)
	}
	// ICE gathering and the connectivity checks begin within a second;
	// give them ten before calling the listener deaf.
	for range 100 {
		if _, _, n := c.Reached(); n > 0 {
			t.Logf("the outside host heard %d datagrams from an unfenced browser", n)
			return
		}
		sleep(ctx, 100*time.Millisecond)
	}
	state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('state').textContent`))
	t.Fatalf("the outside host heard no datagram from an unfenced browser in 10 s (the page says %q): the fenced runs' zero proves nothing", state)
}
