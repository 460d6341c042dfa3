package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The image's user (Dockerfile: USER 10001).
const imageUID = 10001

// A container, as far as headroom can tell, built from what the image
// does: a fresh PID namespace with headroom as PID 1, a read-only root but
// for the output directory and a temporary one, an unprivileged user,
// and nothing of the environment but HOME and TMPDIR. It needs root to
// build (CI runs as root).
type container struct {
	root, bin, out, tmp string
}

func newContainer(t *testing.T) *container {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making PID and mount namespaces needs root (CI runs as root)")
	}
	for _, c := range []string{"unshare", "setpriv", "sh"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s: %v", c, err)
		}
	}
	if out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Skipf("this machine cannot make PID namespaces: %v: %s", err, out)
	}
	c := &container{root: t.TempDir()}
	c.bin, c.out, c.tmp = filepath.Join(c.root, "bin", "headroom"), filepath.Join(c.root, "out"), filepath.Join(c.root, "tmp")
	for _, d := range []string{filepath.Dir(c.bin), c.out, c.tmp, filepath.Join(c.root, "tasks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// t.TempDir is the test's own; the image's user must get to the binary.
	for _, d := range []string{c.root, filepath.Dir(c.root)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, headroomBinary(t), c.bin, 0o755)
	for _, d := range []string{c.out, c.tmp} {
		if err := os.Chown(d, imageUID, imageUID); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// command is headroom with args, run as the image runs it.
func (c *container) command(ctx context.Context, args ...string) *exec.Cmd {
	script := `out=$1 tmp=$2; shift 2
mount --bind "$out" "$out" && mount --bind "$tmp" "$tmp" && mount -o remount,bind,ro / || exit 99
exec setpriv --reuid=` + fmt.Sprint(imageUID) + ` --regid=` + fmt.Sprint(imageUID) + ` --clear-groups --no-new-privs \
	env -i HOME="$tmp" TMPDIR="$tmp" PATH=/usr/bin:/bin "$@"`
	argv := append([]string{"--pid", "--fork", "--mount-proc", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", c.out, c.tmp, c.bin}, args...)
	return exec.CommandContext(ctx, "unshare", argv...)
}

// pid1 is the host's pid of the namespace's PID 1: unshare's child.
func pid1(unshare int) int {
	for _, p := range descendantsOf(unshare) {
		if ppid, _, _, ok := procStat(p.pid); ok && ppid == unshare {
			return p.pid
		}
	}
	return 0
}

// held is a pipe small enough that headroom's result does not fit it:
// headroom blocks printing the result, after it has closed Chrome, until
// the test reads it. What is left in the namespace then is what a
// container would hold for the rest of its life.
func held(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	const fSetPipeSz = 1031
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSz, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	return r, w
}

// watch gathers, until stop is closed, every process seen in the
// namespace of pid1 and how long each was a zombie at most.
type watch struct {
	seen   map[proc]bool
	zombie map[int]time.Time // since when, for those that are zombies now
	oldest time.Duration     // the longest any process stayed a zombie
	which  string            // that zombie, and its parent
}

func (w *watch) look(pid1 int) {
	now := time.Now()
	alive := map[int]bool{}
	for _, p := range append(descendantsOf(pid1), proc{pid: -1}) {
		if p.pid < 0 {
			break
		}
		w.seen[p] = true
		// Only PID 1's own children are its to reap: Chrome reaps its
		// renderers itself, at its own pace (up to 2 s after they exit).
		if ppid, state, _, ok := procStat(p.pid); ok && state == "Z" && ppid == pid1 {
			alive[p.pid] = true
			if _, ok := w.zombie[p.pid]; !ok {
				w.zombie[p.pid] = now
			}
			if d := now.Sub(w.zombie[p.pid]); d > w.oldest {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.pid))
				ppid, _, _, _ := procStat(p.pid)
				w.oldest, w.which = d, fmt.Sprintf("%d %s, child of %d", p.pid, strings.TrimSpace(string(comm)), ppid)
			}
		}
	}
	for pid := range w.zombie {
		if !alive[pid] {
			delete(w.zombie, pid)
		}
	}
}

// inside lists the processes below PID 1 now, with their state.
func inside(pid1 int) []string {
	var out []string
	for _, p := range descendantsOf(pid1) {
		if _, state, _, ok := procStat(p.pid); ok {
			out = append(out, fmt.Sprintf("%d (%s)", p.pid, state))
		}
	}
	return out
}

func TestContainerRunAsPID1(t *testing.T) {
	t.Parallel()
	c := newContainer(t)
	for _, f := range []string{"form-signup.yaml", "form-signup.har"} {
		copyFile(t, filepath.Join("..", "..", "testdata", "tasks", f), filepath.Join(c.root, "tasks", f), 0o644)
	}
	list := writeFile(t, filepath.Join(c.root, "tasks"), "tasks.yaml", "tasks:\n  - file: form-signup.yaml\n")
	if err := os.Chmod(list, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The image's command line, with the index Kubernetes would give.
	cmd := c.command(ctx, "run", "--tasks", list, "--index", "0", "--out", c.out)
	r, w := held(t)
	cmd.Stdout = w
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := make(chan string, 100)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()

	wt := &watch{seen: map[proc]bool{}, zombie: map[int]time.Time{}}
	var log strings.Builder
	init := 0
	reported := false
	for !reported {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("headroom ended before its report\nstderr:\n%s", log.String())
			}
			log.WriteString(l + "\n")
			reported = strings.HasPrefix(l, "headroom run: report: ")
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("no report in time\nstderr:\n%s", log.String())
		}
		if init == 0 {
			init = pid1(cmd.Process.Pid)
		}
		if init != 0 {
			wt.look(init)
		}
	}
	// headroom has closed Chrome and now waits on its stdout.
	time.Sleep(300 * time.Millisecond)
	left := inside(init)
	result, _ := io.ReadAll(r)
	for l := range lines {
		log.WriteString(l + "\n")
	}
	err = cmd.Wait()

	t.Logf("%d processes seen in the namespace; the longest zombie lasted %v", len(wt.seen), wt.oldest.Round(time.Millisecond))
	if len(result) <= 4096 {
		t.Fatalf("the result is %d bytes, no more than the pipe holds: headroom did not wait on it, and what was left in the namespace was not seen", len(result))
	}
	if len(wt.seen) < 3 {
		t.Errorf("saw %d processes below PID 1: Chrome was not watched", len(wt.seen))
	}
	if len(left) > 0 {
		t.Errorf("once headroom closed Chrome, the namespace still held %v (zombies are Z)", left)
	}
	// Reaped while the run goes on, not only at its end: a loaded machine
	// can hold a zombie for a second or more before the wait returns, so
	// the bound is wide; what it catches is a zombie nobody reaps.
	if wt.oldest > 10*time.Second {
		t.Errorf("a process (%s; PID 1 is %d) stayed a zombie for %v", wt.which, init, wt.oldest)
	}
	if err != nil {
		t.Fatalf("exit: %v\nstderr:\n%s", err, log.String())
	}
	if res := decodeResult(t, "stdout", result); res.Status != "succeeded" {
		t.Errorf("status %q: %s\nstderr:\n%s", res.Status, res.Reason, log.String())
	}
	if _, err := os.Stat(filepath.Join(c.out, "result.json")); err != nil {
		t.Errorf("--out: %v", err)
	}
	leftIn(t, c.tmp)
}

// SIGTERM, as Kubernetes and ECS stop a task, to PID 1: the run stops,
// Chrome is closed, the result is written and the exit code says so, well
// inside the grace period the manifests give (30 s).
func TestContainerSIGTERM(t *testing.T) {
	t.Parallel()
	c := newContainer(t)
	srv := animalSite(t)
	task := writeFile(t, filepath.Join(c.root, "tasks"), "wander.yaml", wanderTask(srv.URL, ""))
	if err := os.Chmod(task, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, "run", task, "--out", c.out)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	r, w := held(t)
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var init int
	for began := time.Now(); strings.Count(stderr.String(), "headroom run: step ") < 2; time.Sleep(50 * time.Millisecond) {
		if _, state, _, _ := procStat(cmd.Process.Pid); state == "Z" || time.Since(began) > time.Minute {
			t.Fatalf("no second step (unshare %s)\nstderr:\n%s", state, stderr.String())
		}
		if init == 0 {
			init = pid1(cmd.Process.Pid)
		}
	}
	if init == 0 {
		t.Fatal("no PID 1 found below unshare")
	}
	if err := syscall.Kill(init, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	for !strings.Contains(stderr.String(), "headroom run: report: ") {
		if time.Since(signalled) > 20*time.Second {
			t.Fatalf("no report 20 s after SIGTERM\nstderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped := time.Since(signalled)
	time.Sleep(300 * time.Millisecond)
	left := inside(init)
	result, _ := io.ReadAll(r)
	err := cmd.Wait()
	t.Logf("closed 2 steps in, %v after SIGTERM", stopped.Round(time.Millisecond))
	if stopped > 10*time.Second {
		t.Errorf("headroom took %v to stop after SIGTERM; the manifests' grace period is 30 s and the budget for it 10 s", stopped)
	}
	if len(left) > 0 {
		t.Errorf("after SIGTERM, once Chrome was closed, the namespace still held %v", left)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v; want %d\nstderr:\n%s", err, exitInterrupted, stderr.String())
	}
	if res := decodeResult(t, "stdout", result); res.Status != "error" || res.Reason != "interrupted" {
		t.Errorf("status %q (%s), want error (interrupted)", res.Status, res.Reason)
	}
	leftIn(t, c.tmp)
}

// leftIn reports what a run left in the temporary directory, which is
// also HOME, as in the image: Chromium's per-user settings (.config: its
// crash reporter's; .cache: GTK's) are the same few kilobytes every run,
// and anything else is a leftover.
func leftIn(t *testing.T, tmp string) {
	t.Helper()
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if n := e.Name(); n != ".config" && n != ".cache" {
			t.Errorf("left in the temporary directory: %s", n)
		}
	}
}
