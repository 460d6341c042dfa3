package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// A run exports the budget while it runs (a Prometheus scrape mid-task
// shows the deployment's gauges) and writes its last EMF lines when
// SIGTERM stops it.
func TestRunExportsMetrics(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "wander.yaml", wanderTask(srv.URL, ""))
	emf, addr := filepath.Join(dir, "emf.jsonl"), freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := headroomCmd(t, ctx, nil, "run", task, "--emf", emf, "--metrics-addr", addr)
	var stderr lockedBuffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for began := time.Now(); strings.Count(stderr.String(), "headroom run: step ") < 2; time.Sleep(50 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("no second step\nstderr:\n%s", stderr.String())
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`headroom_reserved_tokens{deployment="stand-in"}`, `headroom_utilisation_ratio{deployment="stand-in",dimension="tokens"}`,
		`headroom_limit_tokens_per_window{deployment="stand-in",kind="effective"}`, `headroom_calls_total{call_type="click-pick"}`, `headroom_active_agents 1`} {
		if !strings.Contains(string(scrape), want) {
			t.Errorf("the scrape mid-run has no %s", want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit %v, want %d", err, exitInterrupted)
	}
	f, err := os.Open(emf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deployment, types := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var o struct {
			AWS struct {
				Timestamp         int64 `json:"Timestamp"`
				CloudWatchMetrics []struct {
					Namespace  string     `json:"Namespace"`
					Dimensions [][]string `json:"Dimensions"`
				} `json:"CloudWatchMetrics"`
			} `json:"_aws"`
			Deployment string `json:"deployment"`
			CallType   string `json:"call_type"`
			Calls      int64  `json:"Calls"`
		}
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil || o.AWS.Timestamp == 0 || len(o.AWS.CloudWatchMetrics) == 0 || o.AWS.CloudWatchMetrics[0].Namespace != "headroom" {
			t.Fatalf("not an EMF line (%v): %s", err, sc.Text())
		}
		if o.Deployment == "stand-in" {
			deployment++
		}
		if o.CallType == "click-pick" && o.Calls > 0 {
			types++
		}
	}
	if deployment == 0 || types == 0 {
		t.Errorf("after SIGTERM the EMF file holds %d deployment lines and %d click-pick lines with calls; want the last figures", deployment, types)
	}
}

func TestMetricsFlagsRefuseWhatCannotWork(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	task := writeFile(t, dir, "a.yaml", zebraTask("http://127.0.0.1:9"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-addr", l.Addr().String()}, "--metrics-addr: listen tcp " + l.Addr().String()},
		{[]string{"--emf", dir}, "--emf: "},
	} {
		code, _, errs := runArgs(t, append([]string{"run", task}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
