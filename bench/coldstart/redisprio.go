package coldstart

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// raiseRedis puts the Redis server at rawURL at serverNice for the run,
// when it runs on this machine and the system allows it, and returns what
// puts its old priority back. Like the simulator, it stands for a service
// on machines of its own: hundreds of clients at clientNice leave a server
// at the default priority a few percent of a core, and a starved store
// times out the processes' first round trips, which no fleet's store does.
// It reports the server's pid, or 0 when the server stays below
// serverNice.
func raiseRedis(ctx context.Context, rawURL string) (pid int, restore func()) {
	restore = func() {}
	if !loopback(hostOf(rawURL)) {
		return 0, restore
	}
	rdb, err := redisstore.Dial(rawURL, 1)
	if err != nil {
		return 0, restore
	}
	defer rdb.Close()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return 0, restore
	}
	pid = infoField(info, "process_id")
	// A server in another PID namespace (a container publishing its port)
	// has a pid that may name another process here: it must be Redis.
	if pid <= 0 {
		return 0, restore
	}
	if comm, err := safefile.ReadFile("/proc/"+strconv.Itoa(pid)+"/comm", 256, "the Redis server's process name"); err != nil || !strings.HasPrefix(string(comm), "redis") {
		return 0, restore
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return 0, restore
	}
	was := map[int]int{}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// Linux's getpriority returns 20 − nice.
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		if err != nil || 20-p <= serverNice {
			continue
		}
		if syscall.Setpriority(syscall.PRIO_PROCESS, tid, serverNice) == nil {
			was[tid] = 20 - p
		}
	}
	// Raised now, or already at it or above.
	if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, pid); err != nil || 20-p > serverNice {
		return 0, restore
	}
	return pid, func() {
		for tid, nice := range was {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
		}
	}
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// infoField reads an integer field of a Redis INFO reply; 0 when absent.
func infoField(info, name string) int {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), name+":"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// hostOf is rawURL's host, or "" when it is not a URL.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
