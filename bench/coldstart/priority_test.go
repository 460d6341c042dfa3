package coldstart

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/headroom-agent/headroom/internal/redistest"
)

// A Redis server on this machine is raised above the clients for the run
// and put back after it, where the system allows it; a remote one is not
// touched.
func TestRaiseRedisAndPutItBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raising a priority needs root")
	}
	srv, err := redistest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	nice := func(pid int) int {
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, pid)
		if err != nil {
			t.Fatal(err)
		}
		return 20 - p
	}
	started := nice(0) // the server inherited this process's
	pid, restore := raiseRedis(context.Background(), srv.URL())
	if pid == 0 {
		t.Fatal("a local Redis server was not raised, as root")
	}
	if n := nice(pid); n > serverNice {
		t.Errorf("Redis runs at nice %d during the run, want %d or above", n, serverNice)
	}
	restore()
	if n := nice(pid); n != started {
		t.Errorf("Redis runs at nice %d after the run, want %d as it started", n, started)
	}
	if pid, _ := raiseRedis(context.Background(), "redis://10.255.255.1:6379/0"); pid != 0 {
		t.Errorf("a remote server was raised (pid %d)", pid)
	}
}

func TestInfoField(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nprocess_id:4242\r\ntcp_port:6379\r\n"
	if got := infoField(info, "process_id"); got != 4242 {
		t.Errorf("process_id %d, want 4242", got)
	}
	if got := infoField(info, "run_id"); got != 0 {
		t.Errorf("an absent field read %d", got)
	}
}
