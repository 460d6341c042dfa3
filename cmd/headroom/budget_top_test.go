package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// topFleet is what a test wrote to a real Redis for budget top to show.
type topFleet struct {
	config     string // the config file naming the deployments and the store
	east, west string // the deployments' names
	agents     int    // agents checked in
}

// fillTopStore writes a config of two deployments of fresh names (a key
// space of their own in a Redis other tests share) and fills the store as
// a fleet would: 12,345 tokens held on east, whose limit Azure lowered to
// 200,000; 6,000 on west, whose breaker is open after 429s (two on tokens,
// one on an adjustment); two agents alive. Reservations end with their
// token window, so it reserves with at least lasting left of one.
func fillTopStore(t *testing.T, lasting time.Duration) topFleet {
	t.Helper()
	url := redistest.URL(t)
	id := budget.NewID()[8:] // short enough to show whole: random bits and a counter
	tf := topFleet{config: filepath.Join(t.TempDir(), "fleet.yaml"), east: "top-" + id + "-east", west: "top-" + id + "-west", agents: 2}
	yaml := fmt.Sprintf(`redis: %s
deployments:
  - name: %s
    endpoint: https://contoso-eastus.openai.azure.com
    model: gpt-4o
    model_version: "2024-11-20"
    tpm: 240000
    auth: {api_key_env: AZURE_OPENAI_KEY_EASTUS}
  - name: %s
    endpoint: https://contoso-westus.openai.azure.com
    model: gpt-4o
    model_version: "2024-11-20"
    tpm: 60000
    auth: {entra: true}
`, url, tf.east, tf.west)
	if err := os.WriteFile(tf.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, err := config.Load(tf.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &f.Budget
	ctx := context.Background()
	store, err := budget.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	east, west := cfg.Deployments[0], cfg.Deployments[1]

	// Reservations last until their token window ends: start far enough
	// from its end that the frames are read in the same one.
	us, err := store.Usage(ctx, east.QuotaKey)
	if err != nil {
		t.Fatal(err)
	}
	w := store.Window()
	if left := time.Duration(us[0].Window+1)*w - time.Duration(us[0].Now.UnixNano()); left < lasting {
		time.Sleep(left + 100*time.Millisecond)
	}
	reserve := func(d budget.Deployment, tokens int64) {
		if _, err := store.Reserve(ctx, "", d.QuotaKey, budget.Cost{Tokens: tokens}, d.Limits(cfg.Margin)); err != nil {
			t.Fatalf("reserve %d on %s: %v", tokens, d.Name, err)
		}
	}
	reserve(east, 12_345)
	reserve(west, 3_000)
	reserve(west, 3_000)
	if err := store.SetEffectiveLimit(ctx, east.QuotaKey, 200_000, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenBreaker(ctx, west.QuotaKey, time.Minute); err != nil {
		t.Fatal(err)
	}
	census, _ := store.Census()
	for _, c := range []budget.Cause{budget.CauseTokens, budget.CauseTokens, budget.CauseAdjustment} {
		if err := census.Count429(ctx, west.QuotaKey, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range tf.agents {
		agent := fmt.Sprintf("top-%s-agent-%d", id, i)
		if err := census.Checkin(ctx, agent, time.Minute); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = census.Checkout(context.Background(), agent) })
	}
	return tf
}

// checkTopFrame checks a frame shows what fillTopStore wrote.
func checkTopFrame(t *testing.T, tf topFleet, frame string) {
	t.Helper()
	for _, want := range []string{
		tf.east, tf.west,
		"12,345 / 200,000", "TPM 200,000 ADJUSTED", "(configured 240,000)",
		"6,000 / 60,000", "breaker OPEN", "429s t/r/a/u 2/0/1/0",
		"18,345 tokens reserved", "2 deployments",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("no %q in the frame:\n%s", want, frame)
		}
	}
	// The request windows move on within seconds: only their allowances
	// (RPM/60 and RPM/6 of 1,440 and 360) are sure.
	for _, want := range []string{`requests 1s [01]/24, 10s [01]/240`, `requests 1s [0-2]/6, 10s [0-2]/60`} {
		if !regexp.MustCompile(want).MatchString(frame) {
			t.Errorf("no %s in the frame:\n%s", want, frame)
		}
	}
	// The agents are the whole Redis's: other tests may have theirs.
	if m := regexp.MustCompile(`(\d+) agents? alive`).FindStringSubmatch(frame); m == nil {
		t.Errorf("no agents in the frame:\n%s", frame)
	} else if n, _ := strconv.Atoi(m[1]); n < tf.agents {
		t.Errorf("%d agents alive, want at least %d:\n%s", n, tf.agents, frame)
	}
	bars := regexp.MustCompile(`(?m)^(\S+)\s+\[(#*)(\.*)\]\s+(\d+)%`).FindAllStringSubmatch(frame, -1)
	if len(bars) != 2 {
		t.Fatalf("want a bar per deployment, got %q:\n%s", bars, frame)
	}
	for i, want := range []float64{12_345.0 / 200_000, 6_000.0 / 60_000} {
		full, n := len(bars[i][2]), len(bars[i][2])+len(bars[i][3])
		if got := float64(full) / float64(n); got < want-0.05 || got > want+0.05 || full == 0 {
			t.Errorf("%s: bar %d of %d full, want about %.0f%%", bars[i][1], full, n, want*100)
		}
	}
}

func TestBudgetTopOnce(t *testing.T) {
	tf := fillTopStore(t, 3*time.Second)
	began := time.Now()
	code, out, errs := runArgs(t, "budget", "top", "--once", "--config", tf.config)
	t.Logf("--once in %v:\n%s", time.Since(began).Round(time.Millisecond), out)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	checkTopFrame(t, tf, out)
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line %d is %d columns: %q", i, n, l)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("--once wrote escape codes: %q", out)
	}

	code, out, _ = runArgs(t, "budget", "top", "--once", "--width", "50", "--config", tf.config)
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := len([]rune(l)); n > 50 {
			t.Errorf("--width 50: line %d is %d columns: %q", i, n, l)
		}
	}
	if code != exitOK || !strings.Contains(out, "breaker OPEN") {
		t.Errorf("--width 50: exit %d:\n%s", code, out)
	}
}

func TestBudgetTopErrors(t *testing.T) {
	dir := t.TempDir()
	deployment := `deployments:
  - name: gpt4o
    endpoint: https://contoso.openai.azure.com
    model: gpt-4o
    tpm: 60000
    auth: {entra: true}
`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	memory := write("memory.yaml", deployment)
	down := write("down.yaml", "redis: redis://"+closed+"/0\n"+deployment)
	t.Setenv(config.Env, "")

	cases := []struct {
		name string
		args []string
		code int
		want string // in stderr
		out  string // in stdout
	}{
		{"in memory", []string{"--once", "--config", memory}, exitOK, "names no Redis", "gpt4o"},
		{"unreachable", []string{"--once", "--config", down}, exitBudget, "the budget store (Redis) the config names cannot be reached", ""},
		{"no config", []string{"--once"}, exitUsage, "no config", ""},
		{"missing file", []string{"--once", "--config", filepath.Join(dir, "none.yaml")}, exitUsage, "none.yaml", ""},
		{"interval", []string{"--interval", "0s", "--config", memory}, exitUsage, "--interval", ""},
		{"stray", []string{"--once", "extra"}, exitUsage, `unexpected argument "extra"`, ""},
		{"help", []string{"-h"}, exitOK, "", "-interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runArgs(t, append([]string{"budget", "top"}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.want) || !strings.Contains(out, c.out) {
				t.Errorf("exit %d, want %d; stderr %q (want %q); stdout %q (want %q)", code, c.code, errs, c.want, out, c.out)
			}
		})
	}
}

// tmuxTop runs headroom budget top in a detached 80x24 tmux session on a
// server of its own, and returns a function that runs tmux commands on it.
// With shell, top runs under a shell that says how it exited and stays,
// so the terminal top left behind can be read; without, top is the
// pane's only process and the session ends with it.
func tmuxTop(t *testing.T, tmux, name string, shell bool, args ...string) func(args ...string) (string, error) {
	t.Helper()
	bin := headroomBinary(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(rc, []byte("set -g default-terminal tmux-256color\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-L", name, "-f", rc}, args...)...)
		cmd.Env = append(os.Environ(), "TERM=xterm") // the server's own; the pane gets default-terminal
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	line := shellQuote(bin)
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	if shell {
		line = "sh -c " + shellQuote(line+`; echo "top exited $?"; exec sleep 600`)
	}
	if out, err := run("new-session", "-d", "-x", "80", "-y", "24", "-s", "top", line); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = run("kill-server") })
	return run
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitTmux polls until ok holds for the output of a tmux command.
func waitTmux(t *testing.T, tmux func(...string) (string, error), ok func(string, error) bool, what string, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := tmux(args...)
		if ok(out, err) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in 15 s; tmux %v: %v\n%s", what, args, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// paneTTY reads the pane's terminal modes: raw while top draws, cooked
// again after.
func paneTTY(t *testing.T, tmux func(...string) (string, error)) string {
	t.Helper()
	tty, err := tmux("display-message", "-p", "-t", "top", "#{pane_tty}")
	if err != nil {
		t.Fatalf("pane_tty: %v %s", err, tty)
	}
	out, err := exec.Command("stty", "-F", strings.TrimSpace(tty), "-a").CombinedOutput()
	if err != nil {
		t.Fatalf("stty -F %s: %v %s", tty, err, out)
	}
	return string(out)
}

func hasMode(stty, mode string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(mode) + `(\s|$)`).MatchString(stty)
}

// topRestored checks the terminal top left: the frame gone with the
// alternate screen, the cursor shown, the keypad and mouse modes off, the
// line discipline cooked again, and top's exit code.
func topRestored(t *testing.T, tmux func(...string) (string, error), tf topFleet, how string) {
	t.Helper()
	after := waitTmux(t, tmux, func(out string, err error) bool { return err == nil && strings.Contains(out, "top exited") },
		"top exiting on "+how, "capture-pane", "-p", "-t", "top")
	if !strings.Contains(after, "top exited 0") {
		t.Errorf("after %s:\n%s\nwant exit 0", how, after)
	}
	if strings.Contains(after, tf.east) {
		t.Errorf("the frame is still on the screen after %s (the alternate screen was not left):\n%s", how, after)
	}
	flags, _ := tmux("display-message", "-p", "-t", "top", "#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{mouse_any_flag}")
	if strings.TrimSpace(flags) != "0 1 0 0" {
		t.Errorf("after %s: alternate screen, cursor shown, cursor keys, mouse = %q, want 0 1 0 0", how, flags)
	}
	if mode := paneTTY(t, tmux); !hasMode(mode, "icanon") || !hasMode(mode, "echo") {
		t.Errorf("%s left the terminal in raw mode:\n%s", how, mode)
	}
}

func TestBudgetTopTmux(t *testing.T) {
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (make test installs it): this test needs a real terminal")
	}
	headroomBinary(t) // built first: the reservations last one token window
	tf := fillTopStore(t, 15*time.Second)
	shows := func(out string, err error) bool { return err == nil && strings.Contains(out, "12,345 / 200,000") }
	gone := func(out string, err error) bool { return err != nil }

	t.Run("q", func(t *testing.T) {
		tmux := tmuxTop(t, tmuxPath, "hrtop-q-"+budget.NewID(), true, "budget", "top", "--config", tf.config)
		began := time.Now()
		frame := waitTmux(t, tmux, shows, "the frame", "capture-pane", "-p", "-t", "top")
		t.Logf("the first frame in %v:\n%s", time.Since(began).Round(time.Millisecond), frame)
		checkTopFrame(t, tf, frame)
		if !strings.Contains(frame, "q quits") {
			t.Errorf("the live view does not say how to quit:\n%s", frame)
		}
		if mode := paneTTY(t, tmux); !hasMode(mode, "-icanon") || !hasMode(mode, "-echo") {
			t.Errorf("the terminal is not in raw mode while top draws:\n%s", mode)
		}
		if out, _ := tmux("display-message", "-p", "-t", "top", "#{alternate_on}"); strings.TrimSpace(out) != "1" {
			t.Errorf("top draws outside the alternate screen (alternate_on %q)", out)
		}

		// Refreshed: a later frame has a later time.
		clock := regexp.MustCompile(`\d\d:\d\d:\d\d`)
		first := clock.FindString(frame)
		waitTmux(t, tmux, func(out string, err error) bool {
			return err == nil && clock.FindString(out) != "" && clock.FindString(out) != first
		}, "a refresh", "capture-pane", "-p", "-t", "top")

		if out, err := tmux("send-keys", "-t", "top", "q"); err != nil {
			t.Fatalf("send-keys: %v %s", err, out)
		}
		topRestored(t, tmux, tf, "q")
	})

	t.Run("Ctrl-C", func(t *testing.T) {
		tmux := tmuxTop(t, tmuxPath, "hrtop-c-"+budget.NewID(), false, "budget", "top", "--config", tf.config)
		waitTmux(t, tmux, shows, "the frame", "capture-pane", "-p", "-t", "top")
		if out, err := tmux("send-keys", "-t", "top", "C-c"); err != nil {
			t.Fatalf("send-keys: %v %s", err, out)
		}
		waitTmux(t, tmux, gone, "the session ending on Ctrl-C", "has-session", "-t", "top")
	})

	t.Run("SIGTERM", func(t *testing.T) {
		tmux := tmuxTop(t, tmuxPath, "hrtop-t-"+budget.NewID(), true, "budget", "top", "--config", tf.config)
		waitTmux(t, tmux, shows, "the frame", "capture-pane", "-p", "-t", "top")
		// The pane's process is the shell; top is its child.
		out, err := tmux("display-message", "-p", "-t", "top", "#{pane_pid}")
		if err != nil {
			t.Fatalf("pane_pid: %v %q", err, out)
		}
		sh := strings.TrimSpace(out)
		children, err := os.ReadFile("/proc/" + sh + "/task/" + sh + "/children")
		pid, perr := strconv.Atoi(strings.TrimSpace(string(children)))
		if err != nil || perr != nil {
			t.Fatalf("top's pid, the child of %s: %v %v %q", sh, err, perr, children)
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		topRestored(t, tmux, tf, "SIGTERM")
	})
}
