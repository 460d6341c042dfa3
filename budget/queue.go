package budget

import (
	"context"
	"slices"
	"sync"
)

// queue lines up the calls of one pool and class in this process that are
// waiting for budget: only the one at the head tries the store; the others
// wait their turn. Without it every waiter retries whenever room might
// have freed, and a crowd of them turns each freed slot into a storm of
// store round trips. Interactive and background calls have a queue each,
// so an interactive call never waits behind a background one that is
// waiting for room only interactive calls may use.
type queue struct {
	mu      sync.Mutex
	busy    bool
	waiting []chan struct{}
}

// enter returns once the caller is at the head, with the function that
// hands the head on; or ctx's error.
func (q *queue) enter(ctx context.Context) (leave func(), err error) {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return q.next, nil
	}
	ready := make(chan struct{})
	q.waiting = append(q.waiting, ready)
	q.mu.Unlock()
	select {
	case <-ready:
		return q.next, nil
	case <-ctx.Done():
		q.mu.Lock()
		if i := slices.Index(q.waiting, ready); i >= 0 {
			q.waiting = slices.Delete(q.waiting, i, i+1)
			q.mu.Unlock()
			return nil, ctx.Err()
		}
		q.mu.Unlock()
		// Made head just as ctx ended: pass the head on.
		q.next()
		return nil, ctx.Err()
	}
}

// next hands the head to the first waiter, or marks the queue idle.
func (q *queue) next() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	close(q.waiting[0])
	q.waiting = q.waiting[1:]
}
