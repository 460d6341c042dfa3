package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/chrometest"
)

// nothingListens is a loopback URL no server answers: a port that was
// free a moment ago.
func nothingListens(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String() + "/"
}

// Each cause has one code, whichever command meets it: the table
// agent.ExitCauses, read by every command. Each case names what stderr
// must say, so that a code reached for another reason (Chrome not
// starting gives 4 too) does not pass for the cause.
func TestExitCodesAgreeAcrossCommands(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	simURL := heuristicSim(t, "d:gpt-4o").URL
	deployment := fmt.Sprintf("  - {name: d, endpoint: %q, model: gpt-4o, tpm: 1000000, auth: {api_key_env: EXIT_KEY}}\n", simURL)
	cfg := writeFile(t, dir, "headroom.yaml", "deployments:\n"+deployment)
	env := []string{"EXIT_KEY=exit-test-key"}
	in := writeFile(t, dir, "in.json", `{"question": "Is it?", "goal": "g", "page": "url: https://x.example/\ntitle: T\n[0] button \"Go\""}`)
	noCassette := writeFile(t, dir, "nocassette.yaml", zebraTask(srv.URL)+"cassette: missing.jsonl\n")
	offsite := writeFile(t, dir, "offsite.yaml", zebraTask(srv.URL)+"allowed_domains: [127.0.0.2]\n")
	deadRedis := writeFile(t, dir, "dead-redis.yaml", "redis: redis://127.0.0.1:1/0\ndeployments:\n"+deployment)
	deadPage := nothingListens(t)
	har := func(name string) string { return filepath.Join(dir, name+".har") }
	missing := filepath.Join(dir, "missing.yaml")

	for _, c := range []struct {
		cause   string
		args    []string
		code    int
		want    string // in stderr
		browser bool   // needs Chrome to reach the cause
	}{
		// Bad usage: a flag, or a file named, that is wrong or missing.
		{"an unknown flag, record", []string{"record", srv.URL, "--out", har("u"), "--no-such-flag"}, exitUsage, "unknown flag", false},
		{"an unknown flag, observe", []string{"observe", srv.URL, "--no-such-flag"}, exitUsage, "unknown flag", false},
		{"an unknown flag, call", []string{"call", "yes-no", "--no-such-flag"}, exitUsage, "unknown flag", false},
		{"an unknown flag, bench fleet", []string{"bench", "fleet", "--no-such-flag"}, exitUsage, "unknown flag", false},
		{"a flag out of range, bench fleet", []string{"bench", "fleet", "--agents", "1", "--processes", "2"}, exitUsage, "--agents 1 must be at least --processes 2", false},
		{"a flag out of range, bench agents", []string{"bench", "agents", "--agents", "0"}, exitUsage, "--agents 0 must be at least 1", false},
		{"a flag out of range, bench coldstart", []string{"bench", "coldstart", "--processes", "0"}, exitUsage, "--processes must be at least 1", false},
		{"a flag out of range, bench store", []string{"bench", "store", "--clients", "x"}, exitUsage, `--clients: "x" is not a positive number`, false},
		{"a required flag missing, record", []string{"record", srv.URL}, exitUsage, "want --out FILE", false},
		{"a required flag missing, call", []string{"call", "yes-no"}, exitUsage, "want --input FILE", false},
		{"a steps file missing, record", []string{"record", srv.URL, "--out", har("s"), "--steps", missing}, exitUsage, "missing.yaml", false},
		{"a steps file missing, observe", []string{"observe", srv.URL, "--steps", missing}, exitUsage, "missing.yaml", false},
		{"a HAR file missing, observe", []string{"observe", "--har", har("missing")}, exitUsage, "missing.har", false},
		{"an input that is not JSON, call", []string{"call", "yes-no", "--input", writeFile(t, dir, "bad.json", `{"question": `)}, exitUsage, "not JSON", false},
		{"a task list missing, bench agents", []string{"bench", "agents", "--tasks", missing}, exitUsage, "--tasks", false},
		{"a task's cassette missing, run, embedded default", []string{"run", noCassette}, exitUsage, "missing.jsonl", false},
		{"a task's cassette missing, run, with a config", []string{"run", noCassette, "--config", cfg}, exitUsage, "missing.jsonl", false},
		{"--cassette missing, call, embedded default", []string{"call", "yes-no", "--input", in, "--cassette", filepath.Join(dir, "missing.jsonl")}, exitUsage, "missing.jsonl", false},
		{"--cassette missing, call, with a config", []string{"call", "yes-no", "--input", in, "--cassette", filepath.Join(dir, "missing.jsonl"), "--config", cfg}, exitUsage, "missing.jsonl", false},

		// The budget: its store (Redis) unreachable at start.
		{"Redis down at start, run", []string{"run", writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL)), "--config", deadRedis}, exitBudget, "redis", false},
		{"Redis down at start, call", []string{"call", "yes-no", "--input", in, "--config", deadRedis}, exitBudget, "redis", false},

		// The browser: a start page nothing answers, a navigation the
		// allowed domains refuse.
		{"a dead start page, observe", []string{"observe", deadPage}, exitBrowser, "the page did not load", true},
		{"a dead start page, record", []string{"record", deadPage, "--out", har("dead")}, exitBrowser, "the page did not load", true},
		{"a dead start page through the fence, observe", []string{"observe", deadPage, "--allow", "127.0.0.1"}, exitBrowser, "the page did not load", true},
		{"a dead start page through the fence, record", []string{"record", deadPage, "--allow", "127.0.0.1", "--out", har("dead-fenced")}, exitBrowser, "the page did not load", true},
		{"a navigation the fence refuses, observe", []string{"observe", srv.URL + "/", "--allow", "127.0.0.2"}, exitBrowser, "outside the run's allowed domains", true},
		{"a navigation the fence refuses, record", []string{"record", srv.URL + "/", "--allow", "127.0.0.2", "--out", har("offsite")}, exitBrowser, "outside the run's allowed domains", true},
		{"a navigation the fence refuses, run", []string{"run", offsite}, exitBrowser, "outside the run's allowed domains", true},
	} {
		t.Run(c.cause, func(t *testing.T) {
			t.Parallel()
			if c.browser {
				chrometest.Require(t)
			}
			r := runBinary(t, env, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("headroom %v exited %d, want %d and %q in stderr:\n%s", c.args, r.code, c.code, c.want, r.stderr)
			}
		})
	}
}

// A benchmark that needs Redis asks for it first: with none at --redis it
// ends at once (it took 28 s, and said it four times over, when the
// workers found out), with the budget's code, the URL without its
// password, and how to start one.
func TestBenchesCheckRedisFirst(t *testing.T) {
	t.Parallel()
	const url = "redis://bench:s3cret-pass@127.0.0.1:1/15"
	for _, args := range [][]string{
		{"bench", "fleet", "--agents", "8", "--processes", "2"},
		{"bench", "agents", "--agents", "2", "--tasks", filepath.Join("..", "..", "testdata", "tasks", "fleet.yaml")},
		{"bench", "coldstart", "--processes", "4"},
		{"bench", "store", "--clients", "1"},
	} {
		t.Run(args[1], func(t *testing.T) {
			t.Parallel()
			args := append(args, "--redis", url)
			r := runBinary(t, nil, args...)
			t.Logf("%s: exit %d in %v", args[1], r.code, r.wall)
			if r.code != exitBudget {
				t.Errorf("exit %d, want %d", r.code, exitBudget)
			}
			for _, want := range []string{"redis://127.0.0.1:1/15", "redis-server --port 6379", "docker run -p 6379:6379 redis"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "s3cret-pass") {
				t.Errorf("the password is in stderr:\n%s", r.stderr)
			}
			if n := strings.Count(r.stderr, "\n"); n != 1 {
				t.Errorf("%d lines on stderr, want the one that says why:\n%s", n, r.stderr)
			}
			// Bounded loosely for a loaded machine: the point is that no
			// worker starts, not the milliseconds.
			if r.wall > 10*time.Second {
				t.Errorf("took %v", r.wall)
			}
		})
	}
}
