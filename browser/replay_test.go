package browser

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	_, err = p.Navigate(ctx, StartURL(a)+"never-recorded.html")
	if !errors.Is(err, ErrLoad) {
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
