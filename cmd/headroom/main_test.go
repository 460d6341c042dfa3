package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageAndExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{nil, 0, "Available Commands:"},
		{[]string{"no-such-command"}, 2, `unknown command "no-such-command"`},
		{[]string{"recrod"}, 2, "did you mean record?"},
		{[]string{"help"}, 0, "sim"},
		{[]string{"--help"}, 0, "Available Commands:"},
		{[]string{"help", "sim"}, 0, "--serve NAME:TPM[:RPM]"},
		{[]string{"help", "bench", "store"}, 0, "headroom bench store [flags]"},
		{[]string{"help", "-h"}, 0, "headroom help [COMMAND]..."},
		{[]string{"help", "nope"}, 2, "unknown command"},
		{[]string{"help", "bench", "stroe"}, 2, "did you mean store?"},
		{[]string{"sim", "-h"}, 0, "--refund"},
		{[]string{"version"}, 0, "headroom "},
		{[]string{"--version"}, 0, "headroom "},
		{[]string{"sim", "--no-such-flag"}, 2, "headroom sim: unknown flag: --no-such-flag"},
		{[]string{"sim", "--refnd", "hold"}, 2, "did you mean --refund?"},
		{[]string{"sim", "-refund", "hold"}, 2, "long flags take two dashes: --refund"},
		{[]string{"sim"}, 2, "no deployments"},
		{[]string{"sim", "--serve", "gpt4o"}, 2, "want NAME:TPM[:RPM]"},
		{[]string{"sim", "--serve", "gpt4o:1000", "--refund", "keep"}, 2, `"keep" is not a refund policy`},
		{[]string{"sim", "--serve", "gpt4o:1000", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"sim", "--config", "/no/such/file.yaml"}, 2, "/no/such/file.yaml"},
		{[]string{"sim", "--deployments", "/no/such/file.yaml"}, 2, "use --config"}, // the old name still works
		{[]string{"bench"}, 0, "Available Commands:"},
		{[]string{"budget", "nope"}, 2, `unknown command "nope" for "headroom budget"`},
	}
	for _, c := range cases {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("headroom %v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", c.args, code, c.code, c.want, out, errs)
		}
	}
}

func TestSimRejectsMalformedYAMLNamingFileAndLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sim.yaml")
	os.WriteFile(file, []byte("deployments:\n  - name: a\n    tpm: 100\n    colour: blue\n"), 0o600)
	code, _, errs := runArgs(t, "sim", "--config", file)
	if code != 2 || !strings.Contains(errs, file+`:4: unknown field "colour"`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestSimServesUntilCancelledAndHidesKeys(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"sim", "--addr", addr, "--serve", "gpt4o:60000", "--api-key", "sekrit-key-1"}, &out, &errb)
	}()
	var resp *http.Response
	for i := 0; i < 100; i++ {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":4096}`))
		req.Header.Set("api-key", "sekrit-key-1")
		var err error
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp == nil {
		t.Fatal("sim never answered")
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("x-ratelimit-remaining-tokens") != "55902" {
		t.Errorf("status %d, remaining %s", resp.StatusCode, resp.Header.Get("x-ratelimit-remaining-tokens"))
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel; stderr %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sim did not stop")
	}
	if strings.Contains(errb.String()+out.String(), "sekrit") {
		t.Errorf("the key reached the output: %s", errb.String())
	}
	if !strings.Contains(errb.String(), "/gpt4o (60000 TPM, 360 RPM)") {
		t.Errorf("start-up line: %s", errb.String())
	}
}

func TestDemo(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := runArgs(t, "demo", "--task", filepath.Join("..", "..", demoTask), "--out", out)
	if code != 0 {
		t.Fatalf("demo exit %d: %s", code, errs)
	}
	var res struct {
		Status string `json:"status"`
		Answer string `json:"answer"`
		Steps  []any  `json:"steps"`
	}
	first, table, _ := strings.Cut(stdout, "\n}\n")
	if err := json.Unmarshal([]byte(first+"}"), &res); err != nil || res.Status != "succeeded" || res.Answer == "" || len(res.Steps) == 0 {
		t.Fatalf("demo result %+v, %v:\n%s", res, err, stdout)
	}
	// The second run follows what the first learned: no model call.
	if !regexp.MustCompile(`model calls +[1-9]\d* +0\n`).MatchString(table) || !regexp.MustCompile(`status +succeeded +succeeded`).MatchString(table) {
		t.Errorf("the table does not show a second run with no call:\n%s", table)
	}
	for _, run := range []string{"first", "second"} {
		for _, f := range []string{"result.json", "report.html"} {
			if _, err := os.Stat(filepath.Join(out, run, f)); err != nil {
				t.Errorf("demo wrote no %s/%s: %v", run, f, err)
			}
		}
	}
	if !strings.Contains(stdout, filepath.Join(out, "second", "report.html")) {
		t.Errorf("demo does not say where the reports are:\n%s", stdout)
	}
	if code, _, errs := runArgs(t, "demo", "--task", "no-such-task.yaml"); code != 2 || !strings.Contains(errs, "--task") {
		t.Errorf("a missing task: exit %d, %s", code, errs)
	}
}
