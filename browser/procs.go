package browser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// maxProcFile bounds a /proc file read: a process's stat is a line.
const maxProcFile = 64 << 10

// descendants lists the processes below pid (Chrome's renderers, GPU and
// utility processes, its zygote), read from /proc; none where there is no
// /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		child, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(child); ok {
			parent[child] = ppid
		}
	}
	var out []int
	for child := range parent {
		for p, hops := parent[child], 0; p > 0 && hops < 64; p, hops = parent[p], hops+1 {
			if p == pid {
				out = append(out, child)
				break
			}
		}
	}
	return out
}

// reap waits for the given processes to be gone, killing what is left
// after grace, and collects those that were left to this process; it
// gives up after twice that. Chrome's helpers outlive the
// browser process by a moment, and a run that says it closed the browser
// must leave none behind. It returns those still running when it gave up.
func reap(pids []int, grace time.Duration) (left []int) {
	deadline := time.Now().Add(grace)
	killed := false
	for len(pids) > 0 {
		alive := pids[:0]
		for _, pid := range pids {
			if !gone(pid) {
				alive = append(alive, pid)
			}
		}
		pids = alive
		if len(pids) == 0 {
			return nil
		}
		switch {
		case !killed && time.Now().After(deadline):
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			killed, deadline = true, time.Now().Add(grace)
		case killed && time.Now().After(deadline):
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// gone reports whether pid has exited and is past this process's help:
// reaped, or a zombie this process has just reaped (its subreaper's
// child), or a zombie only init can reap. A zombie whose parent is
// another of Chrome's processes, still running, is not gone: that parent
// reaps it, or exits and leaves it to this process, which must still be
// here then, or init, which in a container may never reap it.
func gone(pid int) bool {
	state, ppid, ok := procStat(pid)
	switch {
	case !ok:
		return !processAlive(pid)
	case state != 'Z':
		return false
	case ppid == os.Getpid():
		collect(pid)
		return true
	default:
		return ppid <= 1 || !processAlive(ppid)
	}
}

// procStat is a process's state letter (R, S, Z, …) and parent, read
// from /proc; ok is false where there is none to read.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := safefile.ReadFile("/proc/"+strconv.Itoa(pid)+"/stat", maxProcFile, "a /proc file")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err == nil
}
