package learned

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"
)

// memory keeps entries in this process only: for one process, and for
// tests of what sits above a driver.
type memory struct {
	mu      sync.Mutex
	entries map[string]memEntry
	leases  map[string]memLease
}

type memEntry struct {
	rev  int64
	data []byte
}

type memLease struct {
	holder string
	until  time.Time
}

// NewMemory returns a driver that keeps entries in this process's memory;
// they end with it.
func NewMemory() Driver {
	return &memory{entries: map[string]memEntry{}, leases: map[string]memLease{}}
}

func (m *memory) Get(ctx context.Context, key string) ([]byte, int64, error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil, 0, ErrNotFound
	}
	// A copy: the caller may change what it was given.
	return bytes.Clone(e.data), e.rev, nil
}

func (m *memory) Put(ctx context.Context, key string, rev int64, data []byte) error {
	if err := checkPut(key, rev, data); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.entries[key]
	switch {
	case cur.rev == rev && bytes.Equal(cur.data, data):
		return nil
	case cur.rev != rev-1:
		return ErrConflict
	}
	m.entries[key] = memEntry{rev: rev, data: bytes.Clone(data)}
	return nil
}

func (m *memory) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, key)
	return nil
}

func (m *memory) Keys(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.entries))
	for k := range m.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

func (m *memory) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	if err := checkClaim(key, holder, ttl); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if l, ok := m.leases[key]; ok && l.holder != holder && now.Before(l.until) {
		return false, nil
	}
	m.leases[key] = memLease{holder: holder, until: now.Add(ttl)}
	return true, nil
}

func (m *memory) Release(ctx context.Context, key, holder string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkHolder(key, holder); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.holder == holder {
		delete(m.leases, key)
	}
	return nil
}

func (m *memory) Close() error { return nil }
