package coldstart

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A stall is never longer than Max, and the zero Max is twenty medians.
func TestStallsDrawWithinTheCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []Stalls{{Median: time.Millisecond}, {Median: time.Millisecond, Max: 3 * time.Millisecond, Every: time.Second}} {
		long := s.Max
		if long == 0 {
			long = 20 * s.Median
		}
		sawLong := false
		for range 10000 {
			stall, gap := s.draw(rng)
			if stall <= 0 || stall > long || gap < 0 {
				t.Fatalf("%+v drew a stall of %v after %v", s, stall, gap)
			}
			sawLong = sawLong || stall > 2*s.Median
		}
		if !sawLong {
			t.Errorf("%+v never drew a stall past twice its median: no tail", s)
		}
	}
}

// A process run under stalls still finishes, and the starving stops
// with it.
func TestRunFinishesUnderStalls(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := run(cmd, Stalls{Median: 5 * time.Millisecond, Every: 10 * time.Millisecond}, 1); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !cmd.ProcessState.Success() {
		t.Fatalf("sleep ended %v", cmd.ProcessState)
	}
}

// Whatever ends the starving, mid-stall or between stalls, the process
// is left running, never stopped.
func TestStarveNeverLeavesTheProcessStopped(t *testing.T) {
	for i := range 20 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		starved := make(chan struct{})
		go func() {
			defer close(starved)
			Stalls{Median: 2 * time.Millisecond, Every: 2 * time.Millisecond}.starve(cmd.Process, uint64(i), done)
		}()
		time.Sleep(time.Duration(i) * time.Millisecond)
		close(done)
		<-starved
		state := procState(t, cmd.Process)
		cmd.Process.Kill()
		cmd.Wait()
		if state == 'T' {
			t.Fatalf("run %d: the process was left stopped", i)
		}
	}
}

// procState is the one-letter state /proc gives p (R, S, T, …).
func procState(t *testing.T, p *os.Process) byte {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// pid (comm) state …: comm may hold spaces, so read after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		t.Fatalf("unreadable /proc stat %q", b)
	}
	return b[i+2]
}
