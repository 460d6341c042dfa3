package coldstart

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// clientNice is the scheduling priority of the client processes, and
// serverNice that of the services they share (the simulator in the
// bench's own process, and a Redis server on this machine), where the
// system allows raising them (root, or CAP_SYS_NICE).
const (
	clientNice = 10
	serverNice = -5
)

// niceCommand starts the headroom binary at clientNice: through nice(1),
// so that every thread of the process is lowered from its start (Linux
// keeps a priority per thread, and a Go program starts several before a
// parent could lower them), or as it is when nice is not installed.
func niceCommand(ctx context.Context, binary string, args ...string) *exec.Cmd {
	if nice, err := exec.LookPath("nice"); err == nil {
		return exec.CommandContext(ctx, nice, append([]string{"-n", strconv.Itoa(clientNice), binary}, args...)...)
	}
	return exec.CommandContext(ctx, binary, args...)
}

// raisePriority puts the bench's threads, and so its simulator's, at
// serverNice: the simulator stands for a service on machines of its own,
// and one that counts calls late because other work on this machine
// starved it would bunch them itself. Threads started later inherit it.
func raisePriority() bool {
	_, ok := raiseTasks("self", serverNice)
	return ok
}

// raiseTasks puts each thread of process pid ("self" for this one) that
// runs below nice at nice, and returns the old priority of each it
// raised; ok is false when one could not be raised. Linux keeps a
// priority per thread, so a process is raised thread by thread.
func raiseTasks(pid string, nice int) (was map[int]int, ok bool) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, false
	}
	was, ok = map[int]int{}, true
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// Linux's getpriority returns 20 − nice.
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		switch {
		case err != nil:
			// The thread has ended.
		case 20-p <= nice:
			// Already at it or above.
		case syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice) == nil:
			was[tid] = 20 - p
		default:
			ok = false
		}
	}
	return was, ok
}

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
	was, _ := raiseTasks(strconv.Itoa(pid), serverNice)
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
