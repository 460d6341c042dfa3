package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/hostile"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// running reports a process that exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func TestChromeKilledMidRun(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	snap := observe(t, p)
	procs := append([]int{p.PID()}, descendants(p.PID())...)
	if p.PID() == 0 || len(procs) < 2 {
		t.Fatalf("chrome pid %d with processes %v", p.PID(), procs)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 50 { // the connection notices within moments
		if _, err = p.Observe(ctx); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("observe after the kill: %v, want ErrCrashed", err)
	}
	t.Log(err)
	if _, err := p.Click(ctx, snap.Index(0)); !errors.Is(err, ErrCrashed) {
		t.Errorf("click after the kill: %v", err)
	}
	if err := p.Close(); err != nil { // a browser already gone is not an error
		t.Errorf("close after the kill: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []int
		for _, pid := range procs {
			if running(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chrome processes left behind: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRendererCrash(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{AllowSchemes: []string{"chrome"}})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	// The navigation itself may end as aborted before the crash is
	// reported; from then on every call says the renderer crashed.
	if _, err := p.Navigate(ctx, "chrome://crash"); !errors.Is(err, ErrCrashed) && !errors.Is(err, ErrLoad) {
		t.Errorf("navigating to chrome://crash: %v", err)
	}
	_, err := p.Observe(ctx)
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("observe after the renderer crashed: %v", err)
	}
	t.Log(err)
}

func TestCloseLeavesNoProcess(t *testing.T) {
	t.Parallel()
	p := open(t, Options{})
	procs := append([]int{p.PID()}, descendants(p.PID())...)
	p.Close()
	time.Sleep(200 * time.Millisecond)
	for _, pid := range procs {
		if running(pid) {
			t.Errorf("process %d still running after Close", pid)
		}
	}
	if _, err := p.Observe(ctxT(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("observe after Close: %v", err)
	}
}

func TestLaunchFailures(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "chrome")
	os.WriteFile(bad, []byte("#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n"), 0o755)
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"missing", Options{ChromePath: "/nonexistent/chromium"}, "--chrome"},
		{"exits", Options{ChromePath: bad}, "launching"},
		{"record and replay", Options{
			Record: replay.NewRecorder(time.Now(), nil, "test", "0"),
			Replay: replay.NewMatcher(replay.New(time.Now(), "test", "0"), replay.Options{}),
		}, "Record and Replay together"},
		{"no browser there", Options{Remote: "ws://127.0.0.1:1/devtools/browser/x"}, "attaching"},
		{"not an address", Options{Remote: "chrome:9222"}, "not a DevTools address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			_, err := Open(ctx, c.o)
			if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open = %v, want ErrLaunch mentioning %q", err, c.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s to fail", d)
			}
			t.Log(err)
		})
	}
	t.Run("CHROME_PATH", func(t *testing.T) {
		t.Setenv("CHROME_PATH", "/nonexistent/chrome")
		_, err := Open(context.Background(), Options{})
		if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), "CHROME_PATH") {
			t.Errorf("Open = %v", err)
		}
	})
}

// A browser that cannot be reached is a launch failure that says what to
// do, and names the address without its user and password, whichever
// way chromedp or net/http spelled it.
func TestAttachFailureHidesTheAddressCredentials(t *testing.T) {
	const pw = "CANARY-PW-7713"
	for _, addr := range []string{
		"ws://ada:" + pw + "@127.0.0.1:1/devtools/browser/x",
		"http://ada:" + pw + "@127.0.0.1:1",
		"http://ada:" + pw + "@127.0.0.1:1/?token=" + pw,
		"ws://ada:" + url.QueryEscape(pw+"@/:?") + "@127.0.0.1:1/devtools/browser/x",
		"ws://" + pw + "@127.0.0.1:1/devtools/browser/x",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := Open(ctx, Options{Remote: addr})
		cancel()
		if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), "attaching to ") ||
			!strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "--remote-debugging-port") {
			t.Errorf("Open(%s) = %v; want ErrLaunch naming the address and what to do", addr, err)
		}
		if err != nil && (strings.Contains(err.Error(), "CANARY") || strings.Contains(err.Error(), "ada")) {
			t.Errorf("the error shows the address's user or password: %v", err)
		}
	}
}

func TestPageThatNeverLoads(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{LoadTimeout: 2 * time.Second})
	ctx := ctxT(t)
	_, err := p.Navigate(ctx, s.URL+"/slow")
	if !errors.Is(err, ErrLoad) || !strings.Contains(err.Error(), "within 2s") {
		t.Fatalf("navigate to a page that never loads: %v", err)
	}
	t.Log(err)
	// The tab is still usable.
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	observe(t, p)
}

func TestAttachToARunningBrowser(t *testing.T) {
	t.Parallel()
	exe, err := findChrome("")
	if err != nil {
		t.Fatal(err)
	}
	// A profile of its own, removed once the browser and every process it
	// started are gone (they write to it until then).
	profile, err := os.MkdirTemp("", "headroom-attach-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	stderr, _ := cmd.StderrPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	ws := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "DevTools listening on "); ok {
				ws <- u
			}
		}
	}()
	var addr string
	select {
	case addr = <-ws:
	case <-time.After(30 * time.Second):
		t.Fatal("chrome printed no DevTools address")
	}
	s := site(t)
	for _, a := range []string{addr, "http://" + strings.Split(strings.TrimPrefix(addr, "ws://"), "/")[0]} {
		p := open(t, Options{Remote: a})
		mustAct(t, Navigated)(p.Navigate(ctxT(t), s.URL+"/form/index.html"))
		line(t, observe(t, p), `textbox "Full name"`)
		if p.PID() != 0 {
			t.Errorf("an attached page claims pid %d", p.PID())
		}
		if err := p.Close(); err != nil {
			t.Errorf("closing the attached page: %v", err)
		}
		if cmd.ProcessState != nil || !running(cmd.Process.Pid) {
			t.Fatal("closing an attached page stopped the browser")
		}
	}
	// Confined on a browser it did not launch, a run cannot set WebRTC's
	// policy: the page's RTCPeerConnection is refused instead.
	c, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := open(t, Options{Remote: addr, AllowedDomains: []string{hostile.InsideHost}})
	visit(t, p, c, []string{"webrtc.html"})
	if snap := observe(t, p); !strings.Contains(snap.Text, "servers refused: NotAllowedError") || !strings.Contains(snap.Text, "peer refused: NotAllowedError") {
		t.Errorf("WebRTC was not refused on the attached browser:\n%s", snap.Text)
	}
	reachedNothing(t, c, "attached")
}

func TestScreenshots(t *testing.T) {
	t.Parallel()
	s := site(t)
	dir := t.TempDir()
	p := open(t, Options{ScreenshotDir: dir})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	wantErr(t, ErrDisabled)(p.Click(ctx, CSS("#checkout")))
	png, err := p.Screenshot(ctx)
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("screenshot: %v, %d bytes", err, len(png))
	}
	for _, f := range []string{"step-001-navigate.png", "step-002-click-failed.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// WebSockets bypass the Fetch domain; a replay must not open one, nor a
// confined run one to another host. (The replay here has no proxy flags
// of the test's own: what keeps it offline is the product's.)
func TestWebSocketsStayInside(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var dials atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	a, err := replay.Load(filepath.Join(testsite.Dir(), "shop.har"))
	if err != nil {
		t.Fatal(err)
	}
	s := site(t)
	for _, c := range []struct {
		name string
		o    Options
		url  string
		host string
		want int32
	}{
		{"replay", Options{Replay: replay.NewMatcher(a, replay.Options{})}, StartURL(a), "127.0.0.1", 0},
		{"other host", Options{AllowedDomains: []string{"127.0.0.1"}}, s.URL + "/shop/index.html", "localhost", 0},
		{"allowed host", Options{AllowedDomains: []string{"127.0.0.1"}}, s.URL + "/shop/index.html", "127.0.0.1", 1},
	} {
		dials.Store(0)
		p := open(t, c.o)
		mustAct(t, Navigated)(p.Navigate(ctxT(t), c.url))
		js := fmt.Sprintf("try { new WebSocket('ws://%s:%d/'); } catch (e) {} true", c.host, port)
		if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if got := dials.Load(); got != c.want {
			t.Errorf("%s: %d connections to the socket server, want %d", c.name, got, c.want)
		}
		p.Close()
	}
}
