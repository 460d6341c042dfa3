package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// escapeSite is a page whose title and words hold what a terminal acts
// on: a window title set, the screen cleared, a CSI in its one-byte form.
func escapeSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "\x1b]0;owned\x07Zoo", "<h1>Zoo</h1><p>Clear\x1b[2J the screen, then red\u009b31m.</p><a href=\"/zebra\">Zebra facts</a>")
	})
	mux.HandleFunc("GET /zebra", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Zebra\x1b[2J facts", "<h1>Zebra facts</h1><p>A zebra sleeps standing up\x1b]0;owned\x07 in the herd.</p>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// rawControl reports the first control character a terminal would act on.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return r, true
		}
	}
	return 0, false
}

// What a page wrote reaches no terminal raw: the page a model reads, and
// so observe's page and run's progress and answer, drop its control
// characters as every character that shows nothing (a person sees none
// of them); whatever else a command prints shows them escaped.
func TestControlCharactersAreShownEscaped(t *testing.T) {
	t.Parallel()
	srv := escapeSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", fmt.Sprintf("name: zoo\nstart_url: %s/\ngoal: Open the zebra facts and tell how a zebra sleeps.\nmax_steps: 4\n", srv.URL))
	r := runBinary(t, nil, "run", task)
	o := runBinary(t, nil, "observe", srv.URL+"/")
	for name, text := range map[string]string{"run: stdout": r.stdout, "run: stderr": r.stderr, "observe: stdout": o.stdout, "observe: stderr": o.stderr} {
		if c, ok := rawControl(text); ok {
			t.Errorf("%s holds %U raw:\n%q", name, c, text)
		}
	}
	if o.code != exitOK || !strings.Contains(o.stdout, "Clear[2J the screen, then red31m.") {
		t.Errorf("observe exited %d; want the page's words without what shows nothing:\n%s", o.code, o.stdout)
	}
	if !strings.Contains(r.stderr, "standing up]0;owned in the herd") {
		t.Errorf("run's progress does not show the answer:\n%s", r.stderr)
	}
	if res := decodeResult(t, "run's stdout", []byte(r.stdout)); !strings.Contains(res.Answer, "standing up]0;owned in the herd") {
		t.Errorf("the result's answer lost what the page says: %q", res.Answer)
	}
}

// A link planted where a screenshot goes is not followed: its target is
// left as it was, whichever command writes the screenshot.
func TestScreenshotsAreNotWrittenThroughLinks(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	victim := writeFile(t, dir, "victim.txt", "keep me")
	plant := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, path); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	plant(filepath.Join(out, "step-001.png"))
	task := writeFile(t, dir, "task.yaml", zebraTask(srv.URL)+"steps:\n  - screenshot: shot.png\n  - agent: Open the zebra facts and tell how a zebra sleeps.\n")
	plant(filepath.Join(out, "shot.png"))
	r := runBinary(t, nil, "run", task, "--out", out)
	if r.code != exitOK && r.code != exitFailed {
		t.Errorf("run exited %d:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "refusing to write over it") {
		t.Errorf("run did not say it left the link alone:\n%s", r.stderr)
	}

	shots := filepath.Join(dir, "shots")
	plant(filepath.Join(shots, "step-001-navigate.png"))
	rec := runBinary(t, nil, "record", srv.URL+"/", "--out", filepath.Join(dir, "zoo.har"), "--screenshots", shots,
		"--steps", writeFile(t, dir, "steps.yaml", "- click: \"a[href='/zebra']\"\n"))
	if rec.code != exitOK {
		t.Errorf("record exited %d:\n%s", rec.code, rec.stderr)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me" {
		t.Errorf("the link's target was written through: %q, %v", b, err)
	}
	for _, p := range []string{filepath.Join(out, "step-001.png"), filepath.Join(out, "shot.png"), filepath.Join(shots, "step-001-navigate.png")} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: %v; want the planted link left as it was", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(shots, "step-002-click.png")); err != nil {
		t.Errorf("the screenshots beside the link were not written: %v", err)
	}
}

// Input that is no file, or far too much of one, fails at once with the
// usage code; a stream that never ends stops on SIGTERM.
func TestReadersAreBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bomb := writeFile(t, dir, "bomb.yaml", aliasBomb("name: x\nstart_url: http://127.0.0.1:1/\ngoal: g\nallowed_domains:\n", 8))
	redactBomb := writeFile(t, dir, "headroom.yaml", aliasBomb("redact:\n", 8))
	for _, args := range [][]string{
		{"call", "yes-no", "--input", "/dev/zero"},
		{"call", "yes-no", "--input", fifo},
		{"sim", "--config", "/dev/zero"},
		{"sim", "--config", fifo},
		{"run", "/dev/zero"},
		{"run", fifo},
		{"run", bomb},
		{"calltypes", "--config", redactBomb},
		{"observe", "--har", "/dev/zero"},
	} {
		r := runBinary(t, nil, args...)
		if r.code != exitUsage || r.wall > 5*time.Second {
			t.Errorf("headroom %v: exit %d after %v; want %d at once\n%s", args, r.code, r.wall.Round(time.Millisecond), exitUsage, r.stderr)
		}
	}

	// A process signalled before it reached main dies of the signal: that
	// is no answer, so it is asked again, later after its start.
	for _, wait := range []time.Duration{500 * time.Millisecond, 2 * time.Second, 5 * time.Second} {
		if stopsOnSIGTERM(t, wait, "call", "yes-no", "--input", "-") {
			return
		}
	}
	t.Error("call --input - was killed by SIGTERM three times, never handling it")
}

// stopsOnSIGTERM starts headroom with a standard input that stays open
// and silent, signals it after wait, and reports whether it handled the
// signal: false when the signal killed it before it could.
func stopsOnSIGTERM(t *testing.T, wait time.Duration, args ...string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, nil, args...)
	stdin, err := cmd.StdinPipe() // open, and never written to
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && !ee.Exited():
			return false
		case !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted:
			t.Errorf("headroom %v on SIGTERM: %v; want exit %d", args, err, exitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("headroom %v ignored SIGTERM", args)
	}
	return true
}

// aliasBomb is a list under head of 9 aliases to 9 aliases, levels deep.
func aliasBomb(head string, levels int) string {
	var b strings.Builder
	b.WriteString(head + "  - &l0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for l := 1; l < levels; l++ {
		fmt.Fprintf(&b, "  - &l%d [%s]\n", l, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", l-1), 9), ","))
	}
	return b.String()
}

// Redis going away mid-run is the budget's failure, as it is at start.
func TestRunRedisDownMidRunExitsBudget(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	rs, err := redistest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Kill()
	simURL := heuristicSim(t, "d:gpt-4o").URL
	dir := t.TempDir()
	cfg := writeFile(t, dir, "headroom.yaml", fmt.Sprintf("redis: %s\ndeployments:\n  - {name: d, endpoint: %q, model: gpt-4o, tpm: 1000000, auth: {api_key_env: EXIT_KEY}}\n", rs.URL(), simURL))
	task := writeFile(t, dir, "wander.yaml", wanderTask(srv.URL, ""))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, []string{"EXIT_KEY=exit-test-key"}, "run", task, "--config", cfg)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for began := time.Now(); !strings.Contains(stderr.String(), "headroom run: step "); time.Sleep(50 * time.Millisecond) {
		if time.Since(began) > time.Minute {
			t.Fatalf("no step in a minute:\n%s", stderr.String())
		}
	}
	rs.Kill()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitBudget {
		t.Errorf("run with Redis gone mid-run: %v; want exit %d\n%s", err, exitBudget, stderr.String())
	}
	if res := decodeResult(t, "stdout", []byte(stdout.String())); res.Status != agent.Errored || len(res.Steps) == 0 {
		t.Errorf("the result: status %s after %d steps", res.Status, len(res.Steps))
	}
}

// SIGTERM while Chrome starts ends the run as interrupted, with a result
// that says so, printed and written.
func TestRunSIGTERMWhileChromeStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := writeFile(t, dir, "slow-chrome", "#!/bin/sh\nexec sleep 60\n")
	if err := os.Chmod(slow, 0o755); err != nil {
		t.Fatal(err)
	}
	task := writeFile(t, dir, "task.yaml", zebraTask("http://127.0.0.1:1"))
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, nil, "run", task, "--chrome", slow, "--out", out)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The signal comes once the browser is being started: the stand-in
	// for Chrome is running below headroom.
	for began := time.Now(); len(descendantsOf(cmd.Process.Pid)) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("no browser started in 30s:\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("SIGTERM while Chrome starts: %v; want exit %d\n%s", err, exitInterrupted, stderr.String())
	}
	printed := decodeResult(t, "stdout", []byte(stdout.String()))
	saved := decodeResult(t, "result.json", []byte(mustRead(t, filepath.Join(out, "result.json"))))
	for _, res := range []agent.Result{printed, saved} {
		if res.Status != agent.Errored || !strings.Contains(res.Reason, "interrupted") || res.Task != "zebra-sleep" {
			t.Errorf("the result: %+v; want an interrupted error", res)
		}
	}
}

// --allow narrows a task's allowed domains and never widens them;
// --allow-extra widens them, and the result says so.
func TestRunAllowNarrowsAndAllowExtraWidensOnRecord(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", zebraTask(srv.URL)+"allowed_domains: [127.0.0.1]\n")

	r := runBinary(t, nil, "run", task, "--allow", "127.0.0.2")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--allow 127.0.0.2 would widen") || !strings.Contains(r.stderr, "--allow-extra") {
		t.Errorf("--allow past the task: exit %d\n%s", r.code, r.stderr)
	}
	r = runBinary(t, nil, "run", task, "--allow", "127.0.0.1")
	if res := decodeResult(t, "stdout", []byte(r.stdout)); r.code != exitOK || len(res.AllowedExtra) != 0 || strings.Join(res.AllowedDomains, ",") != "127.0.0.1" {
		t.Errorf("--allow within the task: exit %d, allowed %v, extra %v\n%s", r.code, res.AllowedDomains, res.AllowedExtra, r.stderr)
	}
	r = runBinary(t, nil, "run", task, "--allow-extra", "127.0.0.2")
	if res := decodeResult(t, "stdout", []byte(r.stdout)); r.code != exitOK || strings.Join(res.AllowedExtra, ",") != "127.0.0.2" ||
		strings.Join(res.AllowedDomains, ",") != "127.0.0.1,127.0.0.2" {
		t.Errorf("--allow-extra: exit %d, allowed %v, extra %v\n%s", r.code, res.AllowedDomains, res.AllowedExtra, r.stderr)
	}
}
