package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// exporter runs headroom budget exporter on a free port and returns the
// address it serves and a wait for its exit code.
func exporter(t *testing.T, cfg string) (addr string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := headroomCmd(t, ctx, nil, "budget", "exporter", "--config", cfg, "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := regexp.MustCompile(`at http://(\S+)/metrics`)
	lines := bufio.NewScanner(stderr)
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cancel()
		cmd.Wait()
		t.Fatalf("the exporter never said where it serves: %q", said)
	}
	go io.Copy(io.Discard, stderr)
	return addr, func() int {
		defer cancel()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		return cmd.ProcessState.ExitCode()
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// The exporter serves the shared store's figures per deployment and the
// totals the fleet's calls told it, and a SIGTERM ends it with 0. A
// headroom call is a short-lived agent: it is gone before the scrape.
func TestBudgetExporterServesTheFleet(t *testing.T) {
	sim := heuristicSim(t, "gpt4o:gpt-4o").URL
	dir := t.TempDir()
	cfg := filepath.Join(dir, "headroom.yaml")
	prefix := fmt.Sprintf("exporter%d", time.Now().UnixNano())
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`redis: %s
redis_prefix: %s
deployments:
  - {name: gpt4o, endpoint: %q, deployment: gpt4o, model: gpt-4o, tpm: 6000000, auth: {api_key_env: X_KEY}}
`, redistest.URL(t), prefix, sim)), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := runBinary(t, []string{"X_KEY=k"}, "call", "click-pick", "--config", cfg, "--input", "../../calltypes/examples/click-pick.json"); r.code != exitOK {
			t.Fatalf("headroom call: %d\n%s", r.code, r.stderr)
		}
	}
	addr, stop := exporter(t, cfg)
	body := scrape(t, addr)
	for _, want := range []string{
		`headroom_store_up 1`,
		`headroom_calls_total{call_type="click-pick"} 2`,
		`headroom_calls_answered_total{deployment="gpt4o"} 2`,
		`headroom_limit_tokens_per_window{deployment="gpt4o",kind="configured"} 6e+06`,
		`headroom_breaker_open{deployment="gpt4o"} 0`,
		`headroom_shed_total{priority="interactive"} 0`,
		`headroom_active_agents 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in the exporter's metrics", want)
		}
	}
	if code := stop(); code != exitOK {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}
}

// A store down at the start is a scrape with headroom_store_up 0, not an
// exporter that exits; a config that does not load is exit 2.
func TestBudgetExporterErrors(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	down := filepath.Join(dir, "down.yaml")
	os.WriteFile(down, []byte("redis: redis://"+closed+"/0\ndeployments:\n  - {name: gpt4o, endpoint: https://c.openai.azure.com, model: gpt-4o, tpm: 60000, auth: {entra: true}}\n"), 0o600)
	addr, stop := exporter(t, down)
	body := scrape(t, addr)
	if !strings.Contains(body, "headroom_store_up 0\n") || strings.Contains(body, "headroom_reserved_tokens") {
		t.Errorf("a store down: want headroom_store_up 0 and no store figures, got\n%s", grepLines(body, "headroom_"))
	}
	if code := stop(); code != exitOK {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}

	t.Setenv(config.Env, "")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("deployments:\n  - {name: gpt4o, tpm: lots}\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"budget", "exporter", "--config", bad}, "bad.yaml"},
		{[]string{"budget", "exporter"}, "no config"},
		{[]string{"budget", "exporter", "--config", down, "--addr", "nowhere:port"}, "--addr"},
	} {
		if r := runBinary(t, nil, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
