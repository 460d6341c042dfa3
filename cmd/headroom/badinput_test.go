package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A storage state holding a cookie Chrome would refuse is bad usage,
// from --storage-state or from the task's storage_state: the error names
// the file, the line and the field, before any browser starts, and shows
// no cookie's value.
func TestRunRefusesACookieChromeWouldRefuse(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-COOKIE-4410"
	for _, c := range []struct {
		name, cookie, want string
	}{
		{"semicolon-in-name", `{"name": "sid;` + canary + `", "value": "v", "domain": "127.0.0.1"}`, "cookies[1].name holds ';'"},
		{"equals-in-name", `{"name": "sid=` + canary + `", "value": "v", "domain": "127.0.0.1"}`, "cookies[1].name holds '='"},
		{"crlf-in-value", `{"name": "sid", "value": "` + canary + `\r\nSet-Cookie: evil=1", "domain": "127.0.0.1"}`, "cookies[1].value holds U+000D, a control character"},
		{"nul-in-value", `{"name": "sid", "value": "` + canary + `\u0000", "domain": "127.0.0.1"}`, "cookies[1].value holds U+0000, a control character"},
		{"host-prefix-for-subdomains", `{"name": "__Host-sid", "value": "` + canary + `", "domain": ".example.com", "secure": true}`, "cookies[1].domain begins with a dot"},
		{"domain-a-number", `{"name": "sid", "value": "` + canary + `", "domain": "2130706433"}`, `cookies[1].domain "2130706433" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			state := writeFile(t, dir, "state.json", "{\n  \"cookies\": [\n    {\"name\": \"ok\", \"value\": \"1\", \"domain\": \"127.0.0.1\"},\n    "+c.cookie+"\n  ],\n  \"origins\": []\n}\n")
			task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:9"))
			withState := writeFile(t, dir, "with-state.yaml", zebraTask("http://127.0.0.1:9")+"storage_state: state.json\n")
			for _, args := range [][]string{{"run", task, "--storage-state", state}, {"run", withState}} {
				r := runBinary(t, nil, args...)
				if want := "storage state " + state + ":4: " + c.want; r.code != exitUsage || !strings.Contains(r.stderr, want) {
					t.Errorf("headroom %v: exit %d\n%s\nwant exit %d and %q", args, r.code, r.stderr, exitUsage, want)
				}
				if strings.Contains(r.stdout+r.stderr, canary) {
					t.Errorf("headroom %v shows the cookie:\n%s\n%s", args, r.stdout, r.stderr)
				}
			}
		})
	}
}

// A secret whose value holds a placeholder is bad usage when the task's
// secrets are read, naming the task file and the secret, never its value.
func TestRunRefusesASecretHoldingAPlaceholder(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-SECRET-5521"
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:9")+
		"allowed_domains: [127.0.0.1]\nsecrets:\n  pw: {env: HEADROOM_TEST_PW}\nsteps:\n  - type: \"#pw\"\n    text: <secret:pw>\n")
	r := runBinary(t, []string{"HEADROOM_TEST_PW=" + canary + "<secret:pw>"}, "run", task)
	if want := task + `: secrets.pw: the value holds "<secret:"`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d\n%s\nwant exit %d and %q", r.code, r.stderr, exitUsage, want)
	}
	if strings.Contains(r.stdout+r.stderr, canary) {
		t.Errorf("the secret's value is shown:\n%s\n%s", r.stdout, r.stderr)
	}
}

// A host that a browser reads as an IP address written otherwise is bad
// usage wherever it is given, and the error says how to write it: the
// task's start_url and allowed_domains, the page URL of observe and
// record, --allow and --allow-extra.
func TestHostsWrittenAsNumbersAreRefused(t *testing.T) {
	t.Parallel()
	const fix = "is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1"
	dir := t.TempDir()
	for i, host := range []string{"2130706433:8080", "0x7f.1", "127.1", "0177.0.0.1:8080", "0x7F000001"} {
		name := strings.Split(host, ":")[0]
		task := writeFile(t, dir, fmt.Sprintf("task%d.yaml", i), zebraTask("http://"+host))
		r := runBinary(t, nil, "run", task)
		if want := fmt.Sprintf("%s:2: start_url: its host %q %s", task, name, fix); r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("start_url http://%s/: exit %d\n%s\nwant exit %d and %q", host, r.code, r.stderr, exitUsage, want)
		}
	}
	task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:9"))
	allowing := writeFile(t, dir, "allowing.yaml", zebraTask("http://127.0.0.1:9")+"allowed_domains: [127.0.0.1, 0x7f.1]\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", allowing}, allowing + `:5: allowed_domains[1]: "0x7f.1" ` + fix},
		{[]string{"run", task, "--allow", "127.1"}, `headroom run: --allow: "127.1" ` + fix},
		{[]string{"run", task, "--allow-extra", "2130706433"}, `headroom run: --allow-extra: "2130706433" ` + fix},
		{[]string{"observe", "http://0x7f.1:9/"}, `headroom observe: URL: its host "0x7f.1" ` + fix},
		{[]string{"record", "http://127.1:9/", "--out", filepath.Join(dir, "x.har")}, `headroom record: URL: its host "127.1" ` + fix},
		{[]string{"run", writeFile(t, dir, "ends.yaml", zebraTask("http://shop.1"))}, `start_url: its host "shop.1" ends in a number, so a browser reads it as an IPv4 address, and it is none`},
	} {
		r := runBinary(t, nil, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("headroom %v: exit %d\n%s\nwant exit %d and %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
}

// A negative duration is bad usage, from a flag or from the task file.
func TestNegativeDurationsAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:9"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", task, "--load-timeout", "-1s"}, `headroom run: invalid argument "-1s" for "--load-timeout" flag: -1s is negative`},
		{[]string{"observe", "http://127.0.0.1:9/", "--load-timeout=-5ms"}, `headroom observe: invalid argument "-5ms" for "--load-timeout" flag: -5ms is negative`},
		{[]string{"record", "http://127.0.0.1:9/", "--out", filepath.Join(dir, "x.har"), "--load-timeout", "-1m"}, `for "--load-timeout" flag: -1m is negative`},
		{[]string{"run", writeFile(t, dir, "late.yaml", zebraTask("http://127.0.0.1:9")+"deadline: -1s\n")}, "late.yaml:5: deadline: -1s is negative"},
	} {
		r := runBinary(t, nil, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("headroom %v: exit %d\n%s\nwant exit %d and %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
}

// A browser that cannot be attached to is a browser failure, and the
// password (and user) in its address reach neither stdout nor stderr.
func TestAttachFailureKeepsTheAddressPasswordOut(t *testing.T) {
	t.Parallel()
	const pw = "CANARY-DEVTOOLS-PW-3318"
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:9"))
	for _, addr := range []string{
		"ws://ada:" + pw + "@127.0.0.1:1/devtools/browser/x",
		"http://ada:" + pw + "@127.0.0.1:1",
	} {
		for _, args := range [][]string{
			{"run", task, "--browser", addr},
			{"observe", "http://127.0.0.1:9/", "--browser", addr},
			{"record", "http://127.0.0.1:9/", "--out", filepath.Join(dir, "x.har"), "--browser", addr},
		} {
			if !strings.Contains(strings.Join(args, " "), pw) {
				t.Fatalf("the password is not in the command line %v", args)
			}
			r := runBinary(t, nil, args...)
			if r.code != exitBrowser || !strings.Contains(r.stderr, "attaching to ") || !strings.Contains(r.stderr, "127.0.0.1:1") ||
				!strings.Contains(r.stderr, "--remote-debugging-port") {
				t.Errorf("headroom %v: exit %d\n%s\nwant exit %d naming the address and what to do", args[:1], r.code, r.stderr, exitBrowser)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(out, pw) || strings.Contains(out, "ada:") || strings.Contains(out, "ada@") {
					t.Errorf("headroom %v: %s shows the address's user or password:\n%s", args[:1], name, out)
				}
			}
		}
	}
}
