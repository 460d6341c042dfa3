package browser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// TestTestdataRecordings replays the recordings in testdata/pages, which
// the recorder made from the test sites (go test -run TestTestdataRecordings
// -update makes them again), and takes each site's steps on them.
func TestTestdataRecordings(t *testing.T) {
	if *update {
		srv, err := testsite.Start("127.0.0.1:8391") // a fixed origin keeps the files' diffs small
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		for _, s := range sites {
			rec := replay.NewRecorder(time.Now().UTC().Truncate(time.Second), replay.DefaultRedactor(), "headroom", "testdata")
			if _, err := Record(ctxT(t), Options{Record: rec, Logf: t.Logf}, srv.URL+s.path, steps(t, s.name), t.TempDir()); err != nil {
				t.Fatal(err)
			}
			if err := rec.Archive().WriteFile(filepath.Join(testsite.Dir(), s.name+".har")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(testsite.Dir(), s.name+".har")
			a, err := replay.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			if strings.Contains(string(raw), testsite.SessionCookie) || !strings.Contains(string(raw), replay.Redacted) {
				t.Errorf("%s: cookies not redacted", path)
			}
			m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
			snaps := walk(t, open(t, offline(m)), StartURL(a), steps(t, s.name))
			if st := m.Stats(); st.Misses != 0 {
				t.Errorf("replay missed %d requests: %v", st.Misses, st.Missed)
			}
			if len(snaps) != len(steps(t, s.name))+1 {
				t.Errorf("%d snapshots", len(snaps))
			}
		})
	}
}

func TestMissingResourceIsAMiss(t *testing.T) {
	t.Parallel()
	a := shopWithoutLogo(t)
	m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	p := open(t, offline(m))
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, StartURL(a)))
	snap := observe(t, p)
	line(t, snap, `searchbox "Search the catalogue"`) // the page works without its logo
	st := m.Stats()
	if st.Misses != 1 || !strings.HasSuffix(st.Missed[0], "/logo.png") {
		t.Errorf("stats = %+v, want one miss for logo.png", st)
	}
	// A page that was never recorded fails to load, and is a miss too.
	_, err := p.Navigate(ctx, StartURL(a)+"never-recorded.html")
	if !errors.Is(err, ErrNotRecorded) {
		t.Errorf("navigating to an unrecorded page: %v", err)
	}
	if st := m.Stats(); st.Misses != 2 {
		t.Errorf("misses = %d, want 2", st.Misses)
	}
}

// The feed page prints new Date(), Math.random() and getRandomValues():
// replayed, it prints the recording's time and the same numbers every time.
func TestReplayedPageRunsOnTheRecordingsClock(t *testing.T) {
	t.Parallel()
	a, err := replay.Load(filepath.Join(testsite.Dir(), "feed.har"))
	if err != nil {
		t.Fatal(err)
	}
	var stamps []string
	for range 2 {
		p := open(t, offline(replay.NewMatcher(a, replay.Options{})))
		mustAct(t, Navigated)(p.Navigate(ctxT(t), StartURL(a)))
		stamp, err := p.Extract(ctxT(t), CSS("#stamp"))
		if err != nil {
			t.Fatal(err)
		}
		stamps = append(stamps, stamp)
		p.Close()
	}
	want := "Rendered " + a.Recorded().UTC().Format("2006-01-02T15:04")
	if !strings.HasPrefix(stamps[0], want) {
		t.Errorf("replayed page shows %q, want it to start %q", stamps[0], want)
	}
	if stamps[0] != stamps[1] {
		t.Errorf("two replays differ: %q and %q", stamps[0], stamps[1])
	}
}

// notes collects what a Page reports through Logf or Warnf.
type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, fmt.Sprintf(format, args...))
}

func (n *notes) with(sub string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, l := range n.lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// A replayed page sent where its archive has no answer fails with
// ErrNotRecorded, naming the URL, the archive and what it holds, and
// stays where it was.
func TestNavigatingWhereTheReplayHasNoPage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(testsite.Dir(), "shop.har")
	a, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	var warned notes
	o := offline(m)
	o.Warnf = warned.add
	p := open(t, o)
	ctx := ctxT(t)

	// The start URL: on another port than the recording's, as a task
	// file's typo would have it.
	const origin = "http://127.0.0.1:8391"
	missing := "http://127.0.0.1:8090/shop/x.html"
	_, err = p.Navigate(ctx, missing)
	if !errors.Is(err, ErrNotRecorded) || errors.Is(err, ErrLoad) {
		t.Fatalf("navigating to an unrecorded start URL: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		missing + " is not in shop.har (it holds 5 pages: ",
		origin + "/shop/index.html, " + origin + "/shop/, ",
		origin + "/shop/item.html?id=2)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "INTERNET_DISCONNECTED") || strings.Contains(msg, "ERR_ABORTED") {
		t.Errorf("the error speaks the browser's language: %s", msg)
	}
	t.Log(msg)
	if got := m.Stats().Missed; !slices.Equal(got, []string{"GET " + missing}) {
		t.Errorf("missed = %q", got)
	}
	if w := warned.with("replay miss: GET " + missing + " is not in shop.har"); len(w) != 1 {
		t.Errorf("warnings: %q", warned.with(""))
	}

	// The recorded start works; a search the recording never made is a
	// miss of the action that submitted it, and the page stays.
	mustAct(t, Navigated)(p.Navigate(ctx, origin+"/shop/"))
	_, err = p.Type(ctx, CSS("#q"), "chair", true)
	if !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("submitting a search that was not recorded: %v", err)
	}
	want := origin + "/shop/results.html?q=chair is not in shop.har (it holds 5 pages: " + origin + "/shop/results.html?q=desk, " // nearest first
	if !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "browser: type ") {
		t.Errorf("the error does not say %q:\n%v", want, err)
	}
	if u, err := p.URL(ctx); err != nil || u != origin+"/shop/" {
		t.Errorf("after the miss the page is at %q (%v), want where it was", u, err)
	}
	if n := len(m.Stats().Missed); n != 2 {
		t.Errorf("%d misses, want 2: %q", n, m.Stats().Missed)
	}
	// A subresource miss is a warning, not an error: the page still works.
	if _, err := p.Navigate(ctx, origin+"/shop/results.html?q=desk"); err != nil {
		t.Errorf("a recorded page: %v", err)
	}
}

// Replay misses and fuzzy answers reach Warnf, once each, while Logf
// keeps the rest; with no Warnf they go to Logf.
func TestReplayMissesAndFuzzyAnswersAreWarnings(t *testing.T) {
	t.Parallel()
	a := shopWithoutLogo(t)
	const origin = "http://127.0.0.1:8391"
	for _, withWarnf := range []bool{true, false} {
		t.Run(fmt.Sprintf("warnf=%v", withWarnf), func(t *testing.T) {
			t.Parallel()
			m := replay.NewMatcher(a, replay.Options{Fuzzy: true, Redactor: replay.DefaultRedactor()})
			var warned, logged notes
			o := offline(m)
			o.Logf = logged.add
			if withWarnf {
				o.Warnf = warned.add
			}
			p := open(t, o)
			ctx := ctxT(t)
			for range 2 {
				mustAct(t, Navigated)(p.Navigate(ctx, origin+"/shop/"))
			}
			mustAct(t, Navigated)(p.Navigate(ctx, origin+"/shop/results.html?q=desk&page=2"))
			_ = p.Wait(ctx, WaitNetworkQuiet, 5*time.Second)

			to, other := &warned, &logged
			if !withWarnf {
				to, other = &logged, &warned
			}
			miss := to.with("replay miss: GET " + origin + "/shop/logo.png is not in shop.har (the nearest it holds: " + origin + "/shop/")
			if len(miss) != 1 {
				t.Errorf("the logo's miss, reported %d times (want once): %q", len(miss), to.with(""))
			}
			fuzzy := to.with("replay: GET " + origin + "/shop/results.html?q=desk&page=2 answered by the recorded " + origin + "/shop/results.html?q=desk (fuzzy match)")
			if len(fuzzy) != 1 {
				t.Errorf("the fuzzy answer, reported %d times (want once): %q", len(fuzzy), to.with(""))
			}
			if withWarnf && len(other.with("replay")) > 0 {
				t.Errorf("Logf got replay warnings too: %q", other.with("replay"))
			}
			if got := m.Stats().Missed; len(got) != 2 || got[0] != "GET "+origin+"/shop/logo.png" {
				t.Errorf("missed = %q, want the logo twice", got)
			}
			if st := m.Stats(); st.Misses != 2 || st.Fuzzy == 0 {
				t.Errorf("matcher stats = %+v", st)
			}
		})
	}
}

// A miss lists a few of the archive's pages, nearest first, and names
// the nearest request of any other kind.
func TestMissNote(t *testing.T) {
	x := func(method, u, mime string, status int) replay.Exchange {
		return replay.Exchange{Method: method, URL: u, Status: status, ResponseHeaders: []replay.Header{{Name: "Content-Type", Value: mime}}, Body: []byte("x")}
	}
	rec := replay.NewRecorder(time.Now(), nil, "headroom", "test")
	for i := range 8 {
		rec.Add(x("GET", fmt.Sprintf("http://a.test/p%d.html", i), "text/html", 200))
	}
	rec.Add(x("GET", "http://a.test/api/item?id=1", "application/json", 200))
	rec.Add(x("POST", "http://a.test/form", "text/html", 200))
	a := rec.Archive()
	a.Source = "/tmp/some/where/site.har"
	p := &Page{opts: Options{Replay: replay.NewMatcher(a, replay.Options{})}}
	for _, c := range []struct {
		method, u string
		doc       bool
		want      string
	}{
		{"GET", "http://a.test/p7.htm", true, "site.har (it holds 8 pages; the nearest: http://a.test/p7.html, http://a.test/p0.html, http://a.test/p1.html, http://a.test/p2.html, http://a.test/p3.html, …)"},
		{"GET", "http://a.test/api/item?id=2", false, "site.har (the nearest it holds: http://a.test/api/item?id=1)"},
		{"POST", "http://a.test/form", true, "site.har (it holds 8 pages; the nearest: "},
		{"POST", "http://a.test/form", false, "site.har (it holds this POST with another body)"},
		{"PUT", "http://a.test/form", false, "site.har (it holds no PUT request)"},
	} {
		if got := p.missNote(c.method, c.u, c.doc); !strings.HasPrefix(got, c.want) {
			t.Errorf("missNote(%s %s, %v) = %q, want %q", c.method, c.u, c.doc, got, c.want)
		}
	}
	one := replay.NewRecorder(time.Now(), nil, "headroom", "test")
	one.Add(x("GET", "http://a.test/", "text/html; charset=utf-8", 200))
	one.Add(x("GET", "http://a.test/style.css", "text/css", 200))
	p.opts.Replay = replay.NewMatcher(one.Archive(), replay.Options{})
	if got, want := p.missNote("GET", "http://a.test/x", true), "the replayed archive (it holds 1 page: http://a.test/)"; got != want {
		t.Errorf("one page: %q, want %q", got, want)
	}
	none := replay.NewRecorder(time.Now(), nil, "headroom", "test")
	none.Add(x("GET", "http://a.test/style.css", "text/css", 200))
	p.opts.Replay = replay.NewMatcher(none.Archive(), replay.Options{})
	if got, want := p.missNote("GET", "http://a.test/x", true), "the replayed archive (it holds no pages)"; got != want {
		t.Errorf("no page: %q, want %q", got, want)
	}
}

// shopWithoutLogo is the shop's recording less its logo: a page whose
// replay misses one resource.
func shopWithoutLogo(t *testing.T) *replay.Archive {
	t.Helper()
	a, err := replay.Load(filepath.Join(testsite.Dir(), "shop.har"))
	if err != nil {
		t.Fatal(err)
	}
	kept := a.Log.Entries[:0]
	for _, e := range a.Log.Entries {
		if !strings.HasSuffix(e.Request.URL, "/logo.png") {
			kept = append(kept, e)
		}
	}
	a.Log.Entries = kept
	return a
}
