package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// Every run that opens a browser runs the built binary in a process of
// its own: headroom run makes its process Chrome's subreaper and, on
// close, ends and reaps every process below it, which in this test binary
// would be the other tests' browsers, headroom processes and redis-server.

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// headroomBinary builds the command once for this test binary.
func headroomBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("no go command to build headroom with: %w", err)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "headroom-run-test"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "headroom")
		out, err := exec.Command(gobin, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// headroomCmd is the built binary with args, in an environment with no
// config but what env adds.
func headroomCmd(t *testing.T, ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, headroomBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HEADROOM_CONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

type ran struct {
	code           int
	stdout, stderr string
	wall           time.Duration
}

// runBinary runs headroom to the end, bounded so a hang fails the test
// instead of the test binary.
func runBinary(t *testing.T, env []string, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	r := ran{stdout: out.String(), stderr: errb.String(), wall: time.Since(began)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		r.code = ee.ExitCode()
	default:
		// Errorf, not Fatalf: two agents run from goroutines of one test.
		t.Errorf("headroom %v: %v\nstderr:\n%s", args, err, r.stderr)
		r.code = -1
	}
	return r
}

// animalSite is a small site an agent can finish a task on (a link whose
// words match the goal, then the page with the answer) and an archive it
// can wander forever: every page links on to the next, each different, so
// no page repeats and no loop is ever seen.
func animalSite(t *testing.T) *httptest.Server {
	t.Helper()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1>%s</body></html>", title, title, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Animal library", `<p>Welcome to the library.</p>
<ul><li><a href="/about">About this library</a></li>
<li><a href="/zebra">Zebra facts</a></li>
<li><a href="/hours">Opening hours</a></li></ul>`)
	})
	mux.HandleFunc("GET /zebra", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Zebra facts", `<p>Zebras live in herds on the grasslands of Africa.</p>
<p>A zebra sleeps standing up, ready to run.</p><p><a href="/">Back to the library</a></p>`)
	})
	mux.HandleFunc("GET /about", func(w http.ResponseWriter, r *http.Request) {
		page(w, "About this library", `<p>Founded in 1901.</p><p><a href="/">Back to the library</a></p>`)
	})
	mux.HandleFunc("GET /hours", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Opening hours", `<p>The library opens at nine, Monday to Friday.</p><p><a href="/">Back to the library</a></p>`)
	})
	mux.HandleFunc("GET /archive/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 1 {
			http.NotFound(w, r)
			return
		}
		page(w, fmt.Sprintf("Archive %d", n), fmt.Sprintf(`<p>Entry %d: the weather was mild on day %d.</p>
<p><a href="/archive/%d">Next page</a></p>`, n, n, n+1))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// zebraTask is a task the heuristic stand-in finishes in one click.
func zebraTask(base string) string {
	return fmt.Sprintf(`name: zebra-sleep
start_url: %s/
goal: Open the zebra facts and tell how a zebra sleeps.
max_steps: 6
`, base)
}

// wanderTask is a task whose goal no page matches: the stand-in follows
// "Next page" until something stops it.
func wanderTask(base string, extra string) string {
	return fmt.Sprintf(`name: unicorn-saddle
start_url: %s/archive/1
goal: Find the price of the unicorn saddle.
max_steps: 200
%s`, base, extra)
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeResult(t *testing.T, what string, data []byte) agent.Result {
	t.Helper()
	var res agent.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%s is not a result: %v\n%s", what, err, data)
	}
	return res
}

// allCalls is every call a result reports, in steps and outside them.
func allCalls(res agent.Result) []llm.Report {
	var cs []llm.Report
	for _, s := range res.Steps {
		cs = append(cs, s.Calls...)
	}
	return append(cs, res.Calls...)
}

func reserved(res agent.Result) int64 {
	var n int64
	for _, c := range allCalls(res) {
		n += c.TokensReserved
	}
	return n
}

func TestRunSucceedsAndWritesOut(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL))
	out := filepath.Join(dir, "out")
	r := runBinary(t, nil, "run", task, "--out", out)
	t.Logf("exit %d in %v", r.code, r.wall.Round(time.Millisecond))
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, "stdout", []byte(r.stdout))
	if res.Status != agent.Succeeded || res.Task != "zebra-sleep" || !strings.Contains(res.Answer, "standing up") {
		t.Errorf("status %q (%s), answer %q", res.Status, res.Reason, res.Answer)
	}
	if len(res.Steps) == 0 {
		t.Fatal("no steps")
	}
	// With no config, what answered is named as what it is, in the result,
	// the calls and the progress lines; and the success says how it is
	// known.
	if res.Model != embedded.Model || !strings.Contains(r.stderr, "model: "+embedded.Model) || res.Calls[0].Deployment != embedded.Deployment {
		t.Errorf("model %q, first call's deployment %q; stderr:\n%s", res.Model, res.Calls[0].Deployment, r.stderr)
	}
	if res.SuccessBy == "" || !strings.Contains(r.stderr, string(res.Status)+": "+res.Reason) {
		t.Errorf("success_by %q, reason %q", res.SuccessBy, res.Reason)
	}

	// Every call reports all its fields, under their JSON names.
	var raw struct {
		Steps []struct {
			Calls []map[string]any `json:"calls"`
		} `json:"steps"`
		Calls []map[string]any `json:"calls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	fields := []string{"type", "deployment", "max_tokens", "n", "prompt_tokens", "tokens_reserved", "tokens_used", "latency_ms", "retries", "rate_limited"}
	check := func(where string, c map[string]any) {
		for _, f := range fields {
			if _, ok := c[f]; !ok {
				t.Errorf("%s lacks %q: %v", where, f, c)
			}
		}
		if c["deployment"] == "" || c["n"] != 1.0 || c["max_tokens"].(float64) <= 0 || c["tokens_reserved"].(float64) <= 0 {
			t.Errorf("%s: %v", where, c)
		}
	}
	for i, s := range raw.Steps {
		if len(s.Calls) == 0 {
			t.Errorf("step %d made no call", i+1)
		}
		for j, c := range s.Calls {
			check(fmt.Sprintf("step %d call %d", i+1, j+1), c)
		}
	}
	var types []string
	for i, c := range raw.Calls {
		check(fmt.Sprintf("call %d", i+1), c)
		types = append(types, fmt.Sprint(c["type"]))
	}
	if len(types) != 2 || types[0] != "planning" || types[1] != "summarize" {
		t.Errorf("calls outside the steps are %v, want [planning summarize]", types)
	}
	if res.Totals.TokensReserved != reserved(res) || res.Totals.Calls != len(allCalls(res)) {
		t.Errorf("totals %+v do not add up the calls", res.Totals)
	}

	// --out holds the same result, the report and one screenshot a step.
	saved, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeResult(t, "result.json", saved); !reflect.DeepEqual(got, res) {
		t.Errorf("result.json differs from stdout:\n%s\nstdout:\n%s", saved, r.stdout)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !bytes.Contains(report, []byte("zebra-sleep")) {
		t.Errorf("report.html (%v): %.200s", err, report)
	}
	for _, s := range res.Steps {
		want := fmt.Sprintf("step-%03d.png", s.N)
		if s.Screenshot != want {
			t.Errorf("step %d: screenshot %q, want %q", s.N, s.Screenshot, want)
			continue
		}
		png, err := os.ReadFile(filepath.Join(out, s.Screenshot))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("step %d: %s is not a PNG (%v)", s.N, s.Screenshot, err)
		}
	}
}

func TestRunTinyBudget(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	// 500 tokens hold the plan but not a click-pick after it (its cap
	// alone is 192, its prompt the page).
	const budget = 500
	task := writeFile(t, dir, "tiny.yaml", zebraTask(srv.URL)+fmt.Sprintf("token_budget: %d\n", budget))
	r := runBinary(t, nil, "run", task)
	t.Logf("exit %d in %v", r.code, r.wall.Round(time.Millisecond))
	res := decodeResult(t, "stdout", []byte(r.stdout))
	if r.code != exitFailed || res.Status != agent.BudgetExhausted {
		t.Fatalf("exit %d, status %q (%s); want 1 and %q\nstderr:\n%s", r.code, res.Status, res.Reason, agent.BudgetExhausted, r.stderr)
	}
	if n := reserved(res); n > budget || res.Totals.TokensReserved > budget {
		t.Errorf("the calls reserved %d (totals %d) of a %d budget", n, res.Totals.TokensReserved, budget)
	}
	for i, c := range allCalls(res) {
		if c.TokensReserved > budget {
			t.Errorf("call %d (%s) reserved %d", i+1, c.Type, c.TokensReserved)
		}
	}
	if res.Totals.TokenBudget != budget {
		t.Errorf("totals.token_budget %d", res.Totals.TokenBudget)
	}
}

func TestRunShortDeadline(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "deadline.yaml", wanderTask(srv.URL, "deadline: 1s\n"))
	r := runBinary(t, nil, "run", task)
	res := decodeResult(t, "stdout", []byte(r.stdout))
	t.Logf("exit %d in %v after %d steps", r.code, r.wall.Round(time.Millisecond), len(res.Steps))
	if r.code != exitFailed || res.Status != agent.DeadlineHit {
		t.Fatalf("exit %d, status %q (%s); want 1 and %q\nstderr:\n%s", r.code, res.Status, res.Reason, agent.DeadlineHit, r.stderr)
	}
	// The run stops at the deadline, not at max_steps: a little before it
	// when a call's wait for budget would pass it. The process also
	// launched and closed Chrome.
	if el := time.Duration(res.Totals.ElapsedMS) * time.Millisecond; el < 800*time.Millisecond || el > 4*time.Second {
		t.Errorf("the run took %v for a 1s deadline", el)
	}
	if r.wall > 15*time.Second {
		t.Errorf("the process took %v for a 1s deadline", r.wall)
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// proc is a process as /proc knows it; start tells it from a later one
// that got the same id.
type proc struct {
	pid   int
	start string
}

// procStat reads a process's parent, state and start time.
func procStat(pid int) (ppid int, state, start string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", "", false
	}
	// pid (comm) state ppid ... starttime (field 22); comm may hold spaces.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, "", "", false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return 0, "", "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0], f[19], true
}

// descendantsOf lists the processes below root.
func descendantsOf(root int) []proc {
	parent, start := map[int]int{}, map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if ppid, _, st, ok := procStat(pid); ok {
			parent[pid], start[pid] = ppid, st
		}
	}
	var out []proc
	for pid := range parent {
		for p, hops := parent[pid], 0; p > 0 && hops < 64; p, hops = parent[p], hops+1 {
			if p == root {
				out = append(out, proc{pid, start[pid]})
				break
			}
		}
	}
	return out
}

// remaining lists those of ps still there, alive or zombie.
func remaining(ps []proc) []string {
	var left []string
	for _, p := range ps {
		if _, state, st, ok := procStat(p.pid); ok && st == p.start {
			left = append(left, fmt.Sprintf("%d (%s)", p.pid, state))
		}
	}
	return left
}

func TestRunSIGTERM(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "wander.yaml", wanderTask(srv.URL, ""))
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, nil, "run", task, "--out", out)
	var stdout, stderr lockedBuffer // stderr is read while headroom writes it
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	// Chrome starts renderers as it goes: gather every process seen below
	// the child until the signal, which comes after 3s and once a step is
	// taken, so it lands mid-task.
	seen := map[proc]bool{}
	steps := 0
	for began := time.Now(); time.Since(began) < 3*time.Second || steps == 0; time.Sleep(100 * time.Millisecond) {
		for _, p := range descendantsOf(cmd.Process.Pid) {
			seen[p] = true
		}
		steps = strings.Count(stderr.String(), "headroom run: step ")
		if time.Since(began) > 30*time.Second {
			t.Fatalf("no step in 30s\nstderr:\n%s", stderr.String())
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no Chrome below headroom\nstderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	var err error
	select {
	case err = <-waited:
	case <-time.After(20 * time.Second):
		t.Fatalf("headroom still running 20s after SIGTERM\nstderr:\n%s", stderr.String())
	}
	t.Logf("%d processes below headroom, %d steps before SIGTERM; it exited %v after it", len(seen), steps, time.Since(signalled).Round(time.Millisecond))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("wait: %v; want exit %d\nstderr:\n%s", err, exitInterrupted, stderr.String())
	}

	ps := make([]proc, 0, len(seen))
	for p := range seen {
		ps = append(ps, p)
	}
	left := remaining(ps)
	for exited := time.Now(); len(left) > 0 && time.Since(exited) < 2*time.Second; left = remaining(ps) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("2s after headroom exited, %d of Chrome's %d processes remain: %v", len(left), len(ps), left)
	}

	saved, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatalf("--out: %v\nstderr:\n%s", err, stderr.String())
	}
	res := decodeResult(t, "result.json", saved)
	if res.Status != agent.Errored || res.Reason != "interrupted" {
		t.Errorf("status %q, reason %q; want %q, %q", res.Status, res.Reason, agent.Errored, "interrupted")
	}
	if len(res.Steps) == 0 {
		t.Error("result.json lost the steps taken before the signal")
	}
	if printed := decodeResult(t, "stdout", []byte(stdout.String())); !reflect.DeepEqual(printed, res) {
		t.Errorf("stdout differs from result.json:\n%s", stdout.String())
	}
}

// redisWindow picks a token window, in whole minutes, of which at least
// room is left by the Redis clock, so runs started now land in one window
// of the store.
func redisWindow(t *testing.T, rdb redis.UniversalClient, room time.Duration) time.Duration {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for w := 10 * time.Minute; w <= 60*time.Minute; w += time.Minute {
		if left := w - time.Duration(now.UnixMilli()%w.Milliseconds())*time.Millisecond; left >= room {
			return w
		}
	}
	t.Fatalf("no window from 10m to 60m has %v left at %v", room, now)
	return 0
}

// TestRunTwoAgentsShareRedis runs alone, not in parallel: a store call
// over redisstore's 300 ms timeout fails the run, and the other tests'
// browsers on a small machine can delay Redis that long.
func TestRunTwoAgentsShareRedis(t *testing.T) {
	srv := animalSite(t)
	url := redistest.URL(t)
	// A db of its own keeps this test's keys from other tests' on a shared
	// server; the deployment's name keeps them from another run's.
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.DB = 11
	url = fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
	rdb := redis.NewClient(o)
	defer rdb.Close()
	window := redisWindow(t, rdb, 3*time.Minute)

	const key = "runtest-sim-key"
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{
		Name: "gpt-4o-mini", Model: "gpt-4o-mini", ModelVersion: "2024-07-18", TPM: 1_000_000, Reply: "heuristic",
	}}}, azuresim.Options{APIKeys: []string{key}, Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	simRun, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer simRun.Close()

	dep := fmt.Sprintf("runtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := t.TempDir()
	config := writeFile(t, dir, "headroom.yaml", fmt.Sprintf(`redis: %s
window: %s
deployments:
  - name: %s
    endpoint: %s
    deployment: gpt-4o-mini
    model: gpt-4o-mini
    model_version: "2024-07-18"
    tpm: 1000000
    auth: {api_key_env: HEADROOM_RUNTEST_KEY}
`, url, window, dep, simRun.URL))
	tasks := []string{
		writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL)),
		writeFile(t, dir, "hours.yaml", fmt.Sprintf(`name: opening-hours
start_url: %s/
goal: Open the opening hours and tell when the library opens.
max_steps: 6
`, srv.URL)),
	}

	store, err := redisstore.New(context.Background(), redisstore.Options{Client: rdb, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	before, err := store.Usage(context.Background(), dep)
	if err != nil {
		t.Fatal(err)
	}

	results := make([]ran, len(tasks))
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runBinary(t, []string{"HEADROOM_RUNTEST_KEY=" + key}, "run", "--config", config, task)
		}()
	}
	wg.Wait()

	var sum int64
	for i, r := range results {
		t.Logf("%s: exit %d in %v", filepath.Base(tasks[i]), r.code, r.wall.Round(time.Millisecond))
		if r.code != exitOK && r.code != exitFailed {
			t.Fatalf("%s: exit %d\nstderr:\n%s", tasks[i], r.code, r.stderr)
		}
		res := decodeResult(t, tasks[i]+"'s stdout", []byte(r.stdout))
		if res.Status == agent.Errored || len(allCalls(res)) == 0 {
			t.Fatalf("%s: status %q (%s), %d calls\nstderr:\n%s", tasks[i], res.Status, res.Reason, len(allCalls(res)), r.stderr)
		}
		for _, c := range allCalls(res) {
			if c.Deployment != dep {
				t.Errorf("%s: a %s call went to %q", tasks[i], c.Type, c.Deployment)
			}
		}
		sum += reserved(res)
	}
	after, err := store.Usage(context.Background(), dep)
	if err != nil {
		t.Fatal(err)
	}
	u0, u := before[0], after[0]
	if u0.Window != u.Window || u0.Reserved != 0 {
		t.Fatalf("the store's window moved from %d to %d, or held %d before the runs", u0.Window, u.Window, u0.Reserved)
	}
	if u.Reserved != sum {
		t.Errorf("the store holds %d tokens reserved on %s this window; the two results report %d", u.Reserved, dep, sum)
	}
	t.Logf("%s window %v: %d reserved, %d settled, %d used; the results report %d reserved", dep, window, u.Reserved, u.Settled, u.Used, sum)
}

// timeless is a result with what varies from run to run zeroed: timings
// and memory.
func timeless(res agent.Result) agent.Result {
	steps := make([]agent.Step, len(res.Steps))
	for i, s := range res.Steps {
		s.ElapsedMS, s.AgentMS = 0, 0
		s.Calls = timelessCalls(s.Calls)
		steps[i] = s
	}
	res.Steps = steps
	res.Calls = timelessCalls(res.Calls)
	res.Totals.ElapsedMS, res.Totals.ModelMS, res.Totals.PeakRSSMB, res.Totals.ChromePeakRSSMB = 0, 0, 0, 0
	return res
}

func timelessCalls(cs []llm.Report) []llm.Report {
	out := make([]llm.Report, len(cs))
	for i, c := range cs {
		c.LatencyMS = 0
		out[i] = c
	}
	return out
}

func TestRunRecordedReplays(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	har, cassette := filepath.Join(dir, "zebra.har"), filepath.Join(dir, "zebra.jsonl")
	live := writeFile(t, dir, "live.yaml", zebraTask(srv.URL))
	r := runBinary(t, nil, "run", live, "--record-har", har, "--record-calls", cassette)
	t.Logf("live: exit %d in %v", r.code, r.wall.Round(time.Millisecond))
	if r.code != exitOK {
		t.Fatalf("live run: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	want := decodeResult(t, "the live run's stdout", []byte(r.stdout))
	srv.Close()

	offline := writeFile(t, dir, "offline.yaml", zebraTask(srv.URL)+"replay: zebra.har\ncassette: zebra.jsonl\n")
	r = runBinary(t, nil, "run", offline)
	t.Logf("replay: exit %d in %v", r.code, r.wall.Round(time.Millisecond))
	if r.code != exitOK {
		t.Fatalf("replay: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	got := decodeResult(t, "the replay's stdout", []byte(r.stdout))
	if strings.Contains(r.stderr, "missed") {
		t.Errorf("the replay missed requests:\n%s", r.stderr)
	}
	// The same run, but not the same answerer: the result says which.
	if want.Model != embedded.Model || got.Model != "the calls recorded in zebra.jsonl" {
		t.Errorf("model: live %q, replayed %q", want.Model, got.Model)
	}
	want.Model = got.Model
	if w, g := timeless(want), timeless(got); !reflect.DeepEqual(w, g) {
		wj, _ := json.MarshalIndent(w, "", "  ")
		gj, _ := json.MarshalIndent(g, "", "  ")
		t.Errorf("the replay differs from the live run\nlive:\n%s\nreplay:\n%s", wj, gj)
	}
}

func TestRunBadTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       string // after the file's name
	}{
		{"unknown.yaml", "name: a\nstart_url: http://127.0.0.1/\ngoal: do it\ncolour: blue\n", `:4: colour: unknown field`},
		{"url.yaml", "name: a\nstart_url: ftp://127.0.0.1/\ngoal: do it\n", `:2: start_url: scheme "ftp"`},
		{"budget.yaml", "name: a\nstart_url: http://127.0.0.1/\ngoal: do it\ntoken_budget: -5\n", `:4: token_budget: -5 is a negative budget`},
	} {
		file := writeFile(t, dir, c.name, c.body)
		var out, errb bytes.Buffer
		// The task is refused before a browser is opened, so this runs
		// in-process.
		code := run(context.Background(), []string{"run", file}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), file+c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, errb.String(), file+c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%s: stdout %q", c.name, out.String())
		}
	}
	missing := filepath.Join(dir, "no-such-task.yaml")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"run", missing}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), missing) {
		t.Errorf("a missing task file: exit %d, stderr %q; want 2 naming the file", code, errb.String())
	}
}

// TestRunStartURLNotInTheReplay: a replayed task whose start URL the HAR
// lacks fails as work that failed (exit 1), naming the URL and the
// archive, without -v.
func TestRunStartURLNotInTheReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	har, err := filepath.Abs("../../testdata/tasks/shop-oak-desk-cart.har")
	if err != nil {
		t.Fatal(err)
	}
	task := writeFile(t, dir, "miss.yaml", "name: miss\nstart_url: http://127.0.0.1:8391/shop/nowhere.html\ngoal: Report the price.\n"+
		"allowed_domains: [127.0.0.1]\nmax_steps: 2\ndeadline: 1m\nreplay: "+har+"\n")
	// In a process of its own: run reaps every process below it when it
	// closes its browser, which in this test's process would be the
	// other tests' browsers.
	r := runBinary(t, nil, "run", task)
	code, errs := r.code, r.stderr
	if code != exitFailed || !strings.Contains(errs, "http://127.0.0.1:8391/shop/nowhere.html is not in shop-oak-desk-cart.har") ||
		!strings.Contains(errs, "http://127.0.0.1:8391/shop/") {
		t.Errorf("exit %d, want 1 naming the URL, the archive and what it holds; stderr:\n%s", code, errs)
	}
}

// A task's parameters come from --param NAME=VALUE; a flag of the wrong
// form, a name the task does not declare and a parameter with no value
// are bad usage, said before a browser opens.
func TestRunParamsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	task := writeFile(t, dir, "pay.yaml", "name: pay\nstart_url: http://127.0.0.1/\ngoal: Pay invoice {{invoice}} as {{payer}}.\nparams: {invoice: ~, payer: Ada}\n")
	list := writeFile(t, dir, "list.yaml", "tasks:\n  - file: pay.yaml\n    params: {invoice: INV-1}\n  - file: pay.yaml\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{task, "--param", "invoice"}, `--param "invoice": want NAME=VALUE`},
		{[]string{task, "--param", "=x"}, `--param "=x": no name before the '='`},
		{[]string{task, "--param", "invoice=a", "--param", "invoice=b"}, `--param "invoice" is given twice`},
		{[]string{task, "--param", "invoce=INV-1"}, task + `: unknown parameter "invoce": the task declares invoice, payer`},
		{[]string{task}, task + `: parameter "invoice" has no value: give --param invoice=VALUE`},
		{[]string{task, "--param", "invoice=a\tb"}, `parameter "invoice": the value holds a control character`},
		{[]string{"--tasks", list, "--index", "1"}, `parameter "invoice" has no value`},
		{[]string{"--tasks", list, "--index", "0", "--param", "amount=3"}, `unknown parameter "amount"`},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"run"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("run %q: exit %d, stderr %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
		if out.Len() != 0 {
			t.Errorf("run %q: stdout %q", c.args, out.String())
		}
	}
}

// A run with --param puts the values in, and its result says them; in a
// task list, an entry's own value wins over the flag's.
func TestRunParams(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "animal.yaml", fmt.Sprintf(`name: animal-sleep
start_url: %s/
goal: Open the {{animal}} facts and tell how a {{animal}} sleeps.
params: {animal: ~}
max_steps: 6
success: {url: "/{{animal}}$"}
`, srv.URL))
	writeFile(t, dir, "list.yaml", "tasks:\n  - file: animal.yaml\n    params: {animal: zebra}\n")
	for _, args := range [][]string{
		{"run", task, "--param", "animal=zebra"},
		{"run", "--tasks", filepath.Join(dir, "list.yaml"), "--index", "0", "--param", "animal=lion"},
	} {
		r := runBinary(t, nil, args...)
		if r.code != exitOK {
			t.Fatalf("%q: exit %d\nstderr:\n%s", args, r.code, r.stderr)
		}
		res := decodeResult(t, "stdout", []byte(r.stdout))
		if !reflect.DeepEqual(res.Params, map[string]string{"animal": "zebra"}) || res.SuccessBy != agent.SuccessChecked {
			t.Errorf("%q: params %v, success by %q (%s)", args, res.Params, res.SuccessBy, res.Reason)
		}
	}
}
