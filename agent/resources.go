package agent

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// resources samples the memory a run holds: this process's peak (from the
// kernel) and Chrome's, every 250 ms: the proportional set size summed
// over its process tree, so pages its processes share count once.
type resources struct {
	chrome int
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	peak   int64 // Chrome's, in kB
}

func watchResources(chromePID int) *resources {
	r := &resources{chrome: chromePID, done: make(chan struct{})}
	if chromePID <= 0 {
		return r // attached to a browser elsewhere: its memory is not ours to count
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			r.sample()
			select {
			case <-r.done:
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// stop ends the sampling and returns the peaks in MB: this process's and
// Chrome's (0 when it could not be read).
func (r *resources) stop() (self, chrome float64) {
	close(r.done)
	r.wg.Wait()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = float64(ru.Maxrss) / 1024 // kB on Linux
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return round1(self), round1(float64(r.peak) / 1024)
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// maxProcFile bounds a /proc file read: a process's status is a page.
const maxProcFile = 64 << 10

// sample adds up the resident memory of Chrome and its descendants.
func (r *resources) sample() {
	parent := map[int]int{}
	rss := map[int]int64{}
	stats, _ := filepath.Glob("/proc/[0-9]*/status")
	for _, f := range stats {
		b, err := safefile.ReadFile(f, maxProcFile, "a /proc file")
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			fields := strings.Fields(v)
			if len(fields) == 0 {
				continue
			}
			switch k {
			case "PPid":
				parent[pid], _ = strconv.Atoi(fields[0])
			case "VmRSS":
				rss[pid], _ = strconv.ParseInt(fields[0], 10, 64)
			}
		}
	}
	var total int64
	for pid := range rss {
		for p, hops := pid, 0; p > 0 && hops < 64; p, hops = parent[p], hops+1 {
			if p == r.chrome {
				total += pss(pid, rss[pid])
				break
			}
		}
	}
	r.mu.Lock()
	r.peak = max(r.peak, total)
	r.mu.Unlock()
}

// pss is a process's proportional set size in kB, or its resident size
// where the kernel does not say.
func pss(pid int, rss int64) int64 {
	b, err := safefile.ReadFile("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", maxProcFile, "a /proc file")
	if err != nil {
		return rss
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	return rss
}
