package budget

import (
	"container/heap"
	"context"
	"sync"
)

// queue lines up the calls of one pool in this process that are waiting
// for budget: only the one at the head tries the store; the others wait
// their turn. Without it every waiter retries whenever room might have
// freed, and a crowd of them turns each freed slot into a storm of store
// round trips. Interactive calls line up ahead of background ones.
type queue struct {
	mu      sync.Mutex
	busy    bool
	waiting waiters
	seq     uint64
}

type waiter struct {
	class Class
	seq   uint64
	ready chan struct{}
	index int
}

// enter returns once the caller is at the head, with the function that
// hands the head on; or ctx's error.
func (q *queue) enter(ctx context.Context, c Class) (leave func(), err error) {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return q.next, nil
	}
	q.seq++
	w := &waiter{class: c, seq: q.seq, ready: make(chan struct{})}
	heap.Push(&q.waiting, w)
	q.mu.Unlock()
	select {
	case <-w.ready:
		return q.next, nil
	case <-ctx.Done():
		q.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&q.waiting, w.index)
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
	if q.waiting.Len() == 0 {
		q.busy = false
		return
	}
	w := heap.Pop(&q.waiting).(*waiter)
	close(w.ready)
}

// waiters is a heap: interactive before background, then first come.
type waiters []*waiter

func (w waiters) Len() int { return len(w) }
func (w waiters) Less(i, j int) bool {
	if w[i].class != w[j].class {
		return w[i].class < w[j].class
	}
	return w[i].seq < w[j].seq
}
func (w waiters) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].index, w[j].index = i, j
}
func (w *waiters) Push(x any) {
	n := x.(*waiter)
	n.index = len(*w)
	*w = append(*w, n)
}
func (w *waiters) Pop() any {
	old := *w
	n := old[len(old)-1]
	old[len(old)-1] = nil
	n.index = -1
	*w = old[:len(old)-1]
	return n
}
