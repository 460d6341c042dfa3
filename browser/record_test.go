package browser

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/testsite"
)

var update = flag.Bool("update", false, "record testdata/pages/*.har again from the test sites")

var sites = []struct{ name, path string }{
	{"shop", "/shop/index.html"},
	{"form", "/form/index.html"},
	{"feed", "/feed/index.html"},
	{"catalogue", "/catalogue/index.html"},
	{"store", "/store/index.html"},
}

func steps(t testing.TB, name string) []Step {
	t.Helper()
	s, err := LoadSteps(filepath.Join(testsite.Dir(), name+".steps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// walk loads start, takes the steps, and returns the snapshot after the
// load and after every step.
func walk(t *testing.T, p *Page, start string, steps []Step) []string {
	t.Helper()
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, start); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait(ctx, WaitNetworkQuiet, 10*time.Second)
	snaps := []string{observe(t, p).String()}
	for i, s := range steps {
		if _, err := p.Do(ctx, s.Action(t.TempDir())); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s, err)
		}
		_ = p.Wait(ctx, WaitNetworkQuiet, 10*time.Second)
		snaps = append(snaps, observe(t, p).String())
	}
	return snaps
}

// writeAndMatch writes a recording as a HAR file, reads it back as
// replay would, and returns the file and a matcher over it.
func writeAndMatch(t *testing.T, rec *replay.Recorder, name string) (string, *replay.Matcher) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := rec.Archive().WriteFile(path); err != nil {
		t.Fatal(err)
	}
	a, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
}

// offline is a replay, which could not reach the network even if it
// tried: every request not answered from the archive meets a fence that
// refuses every host.
func offline(m *replay.Matcher) Options {
	return Options{Replay: m}
}

func TestRecordThenReplayOffline(t *testing.T) {
	t.Parallel()
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			srv := site(t)
			steps := steps(t, s.name)
			rec := replay.NewRecorder(time.Now(), replay.DefaultRedactor(), "headroom", "test")
			p := open(t, Options{Record: rec})
			live := walk(t, p, srv.URL+s.path, steps)
			p.drain(ctxT(t), 5*time.Second)
			p.Close()
			srv.Close() // the network is cut from here on

			path, m := writeAndMatch(t, rec, s.name+".har")
			replayed := walk(t, open(t, offline(m)), srv.URL+s.path, steps)
			for i := range live {
				if live[i] != replayed[i] {
					t.Errorf("snapshot %d differs\nlive:\n%s\nreplayed:\n%s", i, live[i], replayed[i])
				}
			}
			if st := m.Stats(); st.Misses != 0 {
				t.Errorf("replay missed %d requests: %v", st.Misses, st.Missed)
			}
			raw, _ := os.ReadFile(path)
			for _, secret := range []string{testsite.SessionCookie, "feed-token-SECRET42", "analytical-1843"} {
				if strings.Contains(string(raw), secret) {
					i := strings.Index(string(raw), secret)
					t.Errorf("%s reached the HAR: %s", secret, raw[max(0, i-300):i+50])
				}
			}
		})
	}
}
