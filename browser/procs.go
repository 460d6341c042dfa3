package browser

import (
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
		b, err := safefile.ReadFile(f, maxProcFile, "a /proc file")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		parent[child], _ = strconv.Atoi(fields[1])
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
			if zombie(pid) {
				collect(pid) // ours when this process is their subreaper
			}
			if processAlive(pid) && !zombie(pid) {
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

// zombie reports a process that has exited and waits only to be reaped by
// its parent (init, for Chrome's orphans).
func zombie(pid int) bool {
	b, err := safefile.ReadFile("/proc/"+strconv.Itoa(pid)+"/stat", maxProcFile, "a /proc file")
	if err != nil {
		return false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	return end >= 0 && strings.HasPrefix(strings.TrimSpace(s[end+1:]), "Z")
}
