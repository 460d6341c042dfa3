package budget

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
)

// lostWrites are the writes after a call this process could not make, by
// the quota they were for, not yet told to the fleet's census. A process's
// own metrics say it lost them; the census is what lets budget top, which
// reads the store from outside every agent, say the fleet did.
type lostWrites struct {
	any atomic.Bool // some are waiting: the check on every write is one load
	mu  sync.Mutex
	n   map[string]int64
}

func (l *lostWrites) add(quota string, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int64{}
	}
	l.n[quota] += n
	l.any.Store(true)
}

// take empties the waiting counts and returns them.
func (l *lostWrites) take() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := maps.Clone(l.n)
	clear(l.n)
	l.any.Store(false)
	return n
}

// tellLost tells the census the writes lost so far, once a write shows
// the store answers again; what it still cannot tell waits for the next.
// A store that keeps no census is told nothing.
func (r *Router) tellLost(ctx context.Context) {
	c, ok := r.store.Census()
	if !ok || !r.lost.any.Load() {
		return
	}
	for quota, n := range r.lost.take() {
		if err := c.CountLostWrites(ctx, quota, n); err != nil {
			r.lost.add(quota, n)
		}
	}
}
