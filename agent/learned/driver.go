// Package learned keeps the steps of runs whose success the task's check
// verified, so a later run of the same task template can follow them
// without the model.
package learned

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Driver is where learned entries live. Every driver passes learnedtest.Run.
//
// An entry is opaque bytes with a revision: a writer reads the entry, then
// puts revision+1, and loses to any writer that put first. A lease lets
// one run learn a key while others wait for its result rather than all
// spending model calls on the same task.
type Driver interface {
	// Get returns the entry stored at key and its revision; ErrNotFound
	// when there is none.
	Get(ctx context.Context, key string) (data []byte, rev int64, err error)
	// Put writes data as revision rev, only if the stored revision is
	// rev-1 (0: absent); else ErrConflict. A put that re-sends exactly
	// the stored data at rev succeeds (a retried write).
	Put(ctx context.Context, key string, rev int64, data []byte) error
	// Delete removes the entry at key; absent is not an error.
	Delete(ctx context.Context, key string) error
	// Keys lists the keys of every entry, sorted.
	Keys(ctx context.Context) ([]string, error)
	// Claim takes the lease on key for holder for ttl: true when it is
	// free, expired or already holder's (renewed).
	Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, error)
	// Release drops the lease on key if holder has it; another holder's
	// lease is left alone.
	Release(ctx context.Context, key, holder string) error
	// Close releases what the driver holds open.
	Close() error
}

var (
	// ErrNotFound: no entry is stored at the key.
	ErrNotFound = errors.New("learned: no entry")
	// ErrConflict: another writer put a revision first; read again.
	ErrConflict = errors.New("learned: the entry changed since it was read")
	// ErrUnavailable: the backend cannot be reached. Drivers wrap it, so
	// errors.Is finds it under the backend's own error.
	ErrUnavailable = errors.New("learned: store unavailable")
)

// MaxEntry is the largest entry, in bytes, a driver stores: learned steps
// are small, and an entry this large is a fault that would otherwise fill
// a shared store.
const MaxEntry = 1 << 20

// maxKey bounds a key, so that it and its suffixes fit in a file name.
const maxKey = 200

// maxHolder bounds a lease holder's name.
const maxHolder = 200

const keyRule = "a key is 1 to 200 of A-Z a-z 0-9 . _ - and does not start with '.'"

// CheckKey says whether key may name an entry. Keys are file names and
// Redis key suffixes alike, so they hold only [A-Za-z0-9._-], 1 to 200 of
// them, and no leading '.' (a hidden file, or "." and "..").
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("learned: empty key: %s", keyRule)
	case len(key) > maxKey:
		return fmt.Errorf("learned: key %.40q… is %d bytes: %s", key, len(key), keyRule)
	case key[0] == '.':
		return fmt.Errorf("learned: key %q starts with '.': %s", key, keyRule)
	}
	for i := 0; i < len(key); i++ {
		if !keyByte(key[i]) {
			r, _ := utf8.DecodeRuneInString(key[i:])
			return fmt.Errorf("learned: key %q has %q at byte %d: %s", key, r, i, keyRule)
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// checkPut refuses what no driver stores: a bad key, a revision below 1,
// an entry over MaxEntry.
func checkPut(key string, rev int64, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if rev < 1 {
		return fmt.Errorf("learned: put %q at revision %d: revisions start at 1", key, rev)
	}
	if len(data) > MaxEntry {
		return fmt.Errorf("learned: entry %q is %d bytes, over the %d-byte limit (MaxEntry)", key, len(data), MaxEntry)
	}
	return nil
}

// checkClaim refuses a lease no driver grants: a bad key, no holder, or no
// time to hold it.
func checkClaim(key, holder string, ttl time.Duration) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkHolder(key, holder); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("learned: claim %q for %v: a lease needs a positive time to live", key, ttl)
	}
	return nil
}

func checkHolder(key, holder string) error {
	if holder == "" {
		return fmt.Errorf("learned: lease on %q: no holder named", key)
	}
	if len(holder) > maxHolder {
		return fmt.Errorf("learned: lease on %q: holder name is %d bytes, over %d", key, len(holder), maxHolder)
	}
	return nil
}

// Checked is d behind the rules every driver keeps, checked before d
// sees a call: a key CheckKey takes, a revision from 1, an entry within
// MaxEntry, a named holder and a lease with time to live. A driver
// package returns its driver wrapped in it.
func Checked(d Driver) Driver { return checked{d} }

type checked struct{ d Driver }

func (c checked) Get(ctx context.Context, key string) ([]byte, int64, error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	return c.d.Get(ctx, key)
}

func (c checked) Put(ctx context.Context, key string, rev int64, data []byte) error {
	if err := checkPut(key, rev, data); err != nil {
		return err
	}
	return c.d.Put(ctx, key, rev, data)
}

func (c checked) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return c.d.Delete(ctx, key)
}

func (c checked) Keys(ctx context.Context) ([]string, error) { return c.d.Keys(ctx) }

func (c checked) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	if err := checkClaim(key, holder, ttl); err != nil {
		return false, err
	}
	return c.d.Claim(ctx, key, holder, ttl)
}

func (c checked) Release(ctx context.Context, key, holder string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkHolder(key, holder); err != nil {
		return err
	}
	return c.d.Release(ctx, key, holder)
}

func (c checked) Close() error { return c.d.Close() }
