package coldstart

import (
	"math"
	"math/rand/v2"
	"os"
	"syscall"
	"time"
)

// Stalls starve a client process the way a packed host does: now and then
// the scheduler takes its cores away for a while, at any point of its
// call, between an admission and the request leaving as anywhere else.
// Each stall's length is a lognormal around Median with spread 1 (the 99th
// percentile at ten times the median), at most Max; the gaps between
// stalls are exponential around Every. The zero Median stalls nothing.
type Stalls struct {
	Median time.Duration
	Max    time.Duration // default 20 × Median
	Every  time.Duration // default 10 × Median
}

// draw is one stall's length and the gap before it.
func (s Stalls) draw(rng *rand.Rand) (stall, gap time.Duration) {
	long := s.Max
	if long <= 0 {
		long = 20 * s.Median
	}
	every := s.Every
	if every <= 0 {
		every = 10 * s.Median
	}
	stall = min(long, time.Duration(float64(s.Median)*math.Exp(rng.NormFloat64())))
	gap = time.Duration(rng.ExpFloat64() * float64(every))
	return stall, gap
}

// starve stops and continues p (SIGSTOP, SIGCONT) with stalls drawn
// from s until done is closed or p has exited. It never leaves p stopped:
// a stall ends with a SIGCONT whatever closes done. Signalling through
// os.Process never reaches another process that took p's pid.
func (s Stalls) starve(p *os.Process, seed uint64, done <-chan struct{}) {
	if s.Median <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, uint64(p.Pid)))
	for {
		stall, gap := s.draw(rng)
		if !wait(gap, done) {
			return
		}
		if p.Signal(syscall.SIGSTOP) != nil {
			return // exited
		}
		wait(stall, done)
		if p.Signal(syscall.SIGCONT) != nil {
			return
		}
	}
}

// wait sleeps d, or less if done closes first; it reports whether it
// slept all of d.
func wait(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}
