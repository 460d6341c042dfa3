package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// What is not a page to start on is bad usage, said before any browser
// starts, never a snapshot of about:blank.
func TestObserveRefusesWhatIsNotAPage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.har")
	os.WriteFile(empty, []byte(`{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[]}}`), 0o600)
	one := filepath.Join(dir, "one.har")
	os.WriteFile(one, []byte(`{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[
 {"startedDateTime":"2024-01-01T00:00:00Z","time":1,
  "request":{"method":"GET","url":"http://shop.example/a?x=1","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":0},
  "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":{"size":2,"mimeType":"text/html","text":"hi"},"redirectURL":"","headersSize":-1,"bodySize":2},
  "cache":{},"timings":{"send":0,"wait":1,"receive":0}}]}}`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"observe", ""}, `"" is not an http(s) URL`},
		{[]string{"observe", "notaurl"}, `"notaurl" is not an http(s) URL`},
		{[]string{"observe", "file:///etc/passwd"}, "is not an http(s) URL"},
		{[]string{"observe", "--har", empty}, "holds no page to start on"},
		{[]string{"observe", "--har", one, "http://shop.example/b"}, "has no entry for http://shop.example/b"},
		{[]string{"observe", "--har", one, "http://shop.example/a"}, "has no entry for"},
		{[]string{"observe", "--har", one, "notaurl"}, "has no entry for"},
	} {
		code, out, errs := runArgs(t, append(c.args, "--chrome", "/nonexistent/chrome")...)
		if code != exitUsage || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	// The entry that is there passes the checks: what fails then is the
	// browser that does not exist.
	for _, args := range [][]string{
		{"observe", "--har", one},
		{"observe", "--har", one, "http://shop.example/a?x=1#top"},
		{"observe", "--har", one, "--fuzzy", "http://shop.example/a"},
	} {
		if code, _, errs := runArgs(t, append(args, "--chrome", "/nonexistent/chrome")...); code != exitBrowser {
			t.Errorf("%q: exit %d (%s), want the browser's failure", args, code, errs)
		}
	}
}

// A value that would widen the fence, or name no scheme or secret, is bad
// usage, said before any browser starts.
func TestBrowserFlagsRefuseWhatWouldWidenTheFence(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow", ""}, `--allow: an allowed domain is empty`},
		{[]string{"--allow", "example.com,"}, `--allow: an allowed domain is empty`},
		{[]string{"--allow", "1"}, `write the address in full`},
		{[]string{"--allow", "0.0.1"}, `write the address in full`},
		{[]string{"--allow", "http://example.com"}, `is not a host name or IP address`},
		{[]string{"--allow-scheme", "file:"}, `--allow-scheme "file:": want a URL scheme`},
		{[]string{"--allow-scheme", ""}, `--allow-scheme "": want a URL scheme`},
		{[]string{"--redact-name", "--"}, `--redact-name "--": want a header, parameter or field name`},
	} {
		for _, cmd := range []string{"observe", "record"} {
			args := append([]string{cmd, "http://127.0.0.1:1/", "--out", filepath.Join(t.TempDir(), "x.har"), "--chrome", "/nonexistent/chrome"}, c.args...)
			if cmd == "observe" {
				args = append([]string{cmd, "http://127.0.0.1:1/", "--chrome", "/nonexistent/chrome"}, c.args...)
			}
			code, _, errs := runArgs(t, args...)
			if code != exitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s %q: exit %d, stderr %q; want 2 and %q", cmd, c.args, code, errs, c.want)
			}
		}
	}
}

// observe prints exactly what a pick sees, and another type's view on
// --view; --json holds the snapshot's elements and blocks beside it.
func TestObservePrintsWhatAPickSees(t *testing.T) {
	chrometest.Require(t)
	har := filepath.Join("..", "..", "testdata", "pages", "catalogue.har")
	code, out, errs := runArgs(t, "observe", "--har", har)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "url: http://127.0.0.1:8391/catalogue/\ntitle: ") || !strings.Contains(out, `### [42] link "Walnut dresser"`+"\n(301) 330 EUR\n[43] button \"Add to cart\"") || !strings.Contains(out, `link "Imprint"`) {
		t.Errorf("the pick's view:\n%s", out)
	}
	if _, err := calltypes.ParsePage(strings.TrimSuffix(out, "\n")); err != nil {
		t.Errorf("what observe prints does not read as a page: %v", err)
	}
	code, words, _ := runArgs(t, "observe", "--har", har, "--view", "summarize")
	if code != exitOK || strings.Contains(words, "[42]") || !strings.Contains(words, "Walnut dresser (301) 330 EUR Add to cart") {
		t.Errorf("the summary's view: exit %d\n%s", code, words)
	}
	code, small, _ := runArgs(t, "observe", "--har", har, "--page-tokens", "300")
	if code != exitOK || tokens.Count(small) > 301 || !strings.Contains(small, "below: scroll down") {
		t.Errorf("capped at 300: exit %d, %d tokens\n%s", code, tokens.Count(small), small)
	}
	code, js, _ := runArgs(t, "observe", "--har", har, "--json")
	var snap struct {
		Elements []map[string]any `json:"elements"`
		Blocks   []map[string]any `json:"blocks"`
		View     string           `json:"view"`
	}
	if code != exitOK || json.Unmarshal([]byte(js), &snap) != nil || len(snap.Elements) != 118 || len(snap.Blocks) == 0 || snap.View+"\n" != out {
		t.Errorf("--json: exit %d, %d elements, %d blocks, the view as printed: %v", code, len(snap.Elements), len(snap.Blocks), snap.View+"\n" == out)
	}
	for _, args := range [][]string{{"--view", "screenshot"}, {"--page-tokens", "20"}} {
		if code, _, errs := runArgs(t, append([]string{"observe", "--har", har}, args...)...); code != exitUsage || !strings.Contains(errs, args[0]) {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}
