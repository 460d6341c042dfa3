package redisstore

import (
	"context"
	"sync"
)

// maxBatch bounds how many calls share one script run; maxInFlight how
// many runs of one deployment may be on the wire at once. Two keep the
// server busy while the next batch fills, so a caller waits for about one
// round trip rather than for the batch ahead of it and then its own.
const (
	maxBatch    = 128
	maxInFlight = 2
)

// batcher groups the calls made on one deployment while a script run for it
// is in flight, and sends them together as the next run: group commit. A
// lone caller waits for one round trip, as without batching; many callers
// on one deployment share the script's fixed cost (its invocation, the
// clock, the reads and writes of the deployment's state) instead of
// queueing behind each other in the single-threaded server.
type batcher[T any] struct {
	run func(ctx context.Context, items []*T) // sends one batch, fills each item's result

	mu      sync.Mutex
	queue   []*T
	waiters []chan struct{}
	running int             // loops sending batches, at most maxInFlight
	idle    []chan struct{} // closed when the queue next runs dry
}

// start adds a sending loop if there is room for one; b.mu is held.
func (b *batcher[T]) start() {
	if b.running < maxInFlight {
		b.running++
		go b.loop()
	}
}

// do queues item and returns once a batch carrying it has run, or when ctx
// ends first: abandoned is then true, and the item may still run; ran is
// closed when it has.
func (b *batcher[T]) do(ctx context.Context, item *T) (ran <-chan struct{}, abandoned bool) {
	done := make(chan struct{})
	b.mu.Lock()
	b.queue = append(b.queue, item)
	b.waiters = append(b.waiters, done)
	b.start()
	b.mu.Unlock()
	select {
	case <-done:
		return done, false
	case <-ctx.Done():
		return done, true
	}
}

// post queues item without waiting for it to run.
func (b *batcher[T]) post(item *T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, item)
	b.waiters = append(b.waiters, nil)
	b.start()
}

// flush returns once every item queued before it has run, or ctx ends.
func (b *batcher[T]) flush(ctx context.Context) error {
	b.mu.Lock()
	if b.running == 0 {
		b.mu.Unlock()
		return nil
	}
	idle := make(chan struct{})
	b.idle = append(b.idle, idle)
	b.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop sends batches until the queue is empty.
func (b *batcher[T]) loop() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatch)
		if n == 0 {
			b.running--
			if b.running == 0 {
				for _, c := range b.idle {
					close(c)
				}
				b.idle = nil
			}
			b.mu.Unlock()
			return
		}
		items, waiters := b.queue[:n:n], b.waiters[:n:n]
		b.queue, b.waiters = b.queue[n:], b.waiters[n:]
		b.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 2*DefaultTimeout)
		b.run(ctx, items)
		cancel()
		for _, w := range waiters {
			if w != nil {
				close(w)
			}
		}
	}
}

// batchers keeps one batcher per deployment, made on first use.
type batchers[T any] struct {
	run func(deployment string) func(ctx context.Context, items []*T)
	m   sync.Map // deployment -> *batcher[T]
}

// flush waits for the batchers of deployments (all when none are named).
func (bs *batchers[T]) flush(ctx context.Context, deployments ...string) error {
	var err error
	visit := func(b *batcher[T]) {
		if e := b.flush(ctx); e != nil && err == nil {
			err = e
		}
	}
	if len(deployments) == 0 {
		bs.m.Range(func(_, b any) bool { visit(b.(*batcher[T])); return true })
		return err
	}
	for _, d := range deployments {
		if b, ok := bs.m.Load(d); ok {
			visit(b.(*batcher[T]))
		}
	}
	return err
}

func (bs *batchers[T]) get(deployment string) *batcher[T] {
	if b, ok := bs.m.Load(deployment); ok {
		return b.(*batcher[T])
	}
	b, _ := bs.m.LoadOrStore(deployment, &batcher[T]{run: bs.run(deployment)})
	return b.(*batcher[T])
}
