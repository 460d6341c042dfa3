package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/testsite"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRecordThenObserveOffline(t *testing.T) {
	srv, err := testsite.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	har := filepath.Join(dir, "form.har")
	steps := filepath.Join(testsite.Dir(), "form.steps.yaml")
	code, out, errs := runCmd(t, "record", srv.URL+"/form/index.html", "--out", har, "--steps", steps, "--screenshots", filepath.Join(dir, "shots"), "--json")
	if code != exitOK {
		t.Fatalf("record exited %d: %s", code, errs)
	}
	var sum struct {
		Requests int      `json:"requests"`
		Outcomes []string `json:"outcomes"`
		Title    string   `json:"title"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Requests < 4 || sum.Title != "Welcome" || len(sum.Outcomes) != 11 {
		t.Errorf("summary %s (%v)", out, err)
	}
	if shots, _ := os.ReadDir(filepath.Join(dir, "shots")); len(shots) < 10 { // one per action; expect-only steps take none
		t.Errorf("%d screenshots for 9 actions and the load", len(shots))
	}
	raw, _ := os.ReadFile(har)
	for _, s := range []string{testsite.SessionCookie, "analytical-1843"} {
		if strings.Contains(string(raw), s) {
			t.Errorf("%s reached the HAR", s)
		}
	}
	if _, err := replay.Load(har); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	code, out, errs = runCmd(t, "observe", "--har", har, "--steps", steps)
	if code != exitOK || !strings.Contains(out, "Welcome, Ada Lovelace (pro plan)") {
		t.Errorf("observe exited %d\n%s\n%s", code, out, errs)
	}
	// A page the recording never saw is a miss, and a failure.
	code, _, errs = runCmd(t, "observe", "--har", har, srv.URL+"/form/other.html")
	if code == exitOK || !strings.Contains(errs, "other.html") {
		t.Errorf("observing an unrecorded page exited %d: %s", code, errs)
	}
}

func TestRecordBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "steps.yaml")
	os.WriteFile(bad, []byte("- click: '#a'\n- selct: '#b'\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"record", "http://127.0.0.1:1/"}, exitUsage, "--out"},
		{[]string{"record", "ftp://x/", "--out", "x.har"}, exitUsage, "not an http(s) URL"},
		{[]string{"record", "http://127.0.0.1:1/", "--out", filepath.Join(dir, "x.har"), "--steps", bad}, exitUsage, "steps.yaml:2"},
		{[]string{"record", "http://127.0.0.1:1/", "--out", filepath.Join(dir, "x.har"), "--chrome", "/nonexistent/chrome"}, exitBrowser, "--chrome"},
		{[]string{"record", "http://127.0.0.1:1/", "--out", filepath.Join(dir, "x.har")}, exitBrowser, "the page did not load"},
		{[]string{"observe", "--har", bad}, exitUsage, "steps.yaml"},
		{[]string{"observe", "http://127.0.0.1:1/", "--allow", "https://example.com/"}, exitUsage, "--allow: \"https://example.com/\" is not a host name"},
	} {
		code, _, errs := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.har")); err == nil {
		t.Error("a failed recording with nothing in it wrote a HAR")
	}
}

// A name given with --redact is secret in the HAR like the built-in ones.
func TestRecordRedactsTheNamesItIsGiven(t *testing.T) {
	srv, err := testsite.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	har := filepath.Join(t.TempDir(), "shop.har")
	code, _, errs := runCmd(t, "record", srv.URL+"/shop/index.html?billing_ref=CANARY-BILL-77&q=desk", "--out", har, "--redact-name", "billing-ref")
	if code != exitOK {
		t.Fatalf("record exited %d: %s", code, errs)
	}
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "CANARY-BILL-77") || strings.Contains(errs, "CANARY-BILL-77") {
		t.Errorf("the value of a --redact name reached the HAR or stderr")
	}
	if !strings.Contains(string(raw), "q=desk") {
		t.Errorf("the HAR lost the parameters that are not secret")
	}
}
