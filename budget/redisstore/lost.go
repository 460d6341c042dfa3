package redisstore

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/headroom-agent/headroom/budget"
)

// lostSettles counts the settles the queue gave up on, per deployment,
// with the last error: a settle is not waited for, so its failure reaches
// no caller but Flush's and Close's. Each such settle holds its
// reservation to its window's end.
type lostSettles struct {
	mu   sync.Mutex
	n    map[string]int
	last error
}

func (l *lostSettles) add(deployment string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[deployment]++
	l.last = err
}

// take returns the settles lost since the last take, as one StoreError
// that names them; nil when none was.
func (l *lostSettles) take() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.n) == 0 {
		return nil
	}
	var parts []string
	for d, n := range l.n {
		parts = append(parts, fmt.Sprintf("%d on %s", n, d))
	}
	sort.Strings(parts)
	err := &budget.StoreError{Op: "settle", Err: fmt.Errorf("settles not written, each holding its reservation to its window's end (%s): %w", strings.Join(parts, ", "), l.last)}
	l.n, l.last = nil, nil
	return err
}
