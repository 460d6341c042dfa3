package learned

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"
)

// Library is what the agent uses of a store: entries read, checked and
// verified, written only as the next revision, and counted.
type Library struct {
	d    Driver
	sign []byte

	mu    sync.Mutex
	stats Stats
}

// Options shape a Library.
type Options struct {
	// SignKey, when set, signs every entry written and refuses one read
	// without a valid signature: for a store others can write to.
	SignKey []byte
}

// Miss reasons: why a learned run was not followed to the end.
const (
	MissNone      = "none"      // no entry for the template
	MissUnusable  = "unusable"  // an entry that does not parse or names what the task lacks
	MissUnsigned  = "unsigned"  // an entry without a valid signature
	MissElement   = "element"   // no one clear match for a learned element
	MissOutcome   = "outcome"   // the action had an outcome of another kind
	MissAction    = "action"    // the action failed on the page
	MissUnchecked = "unchecked" // the steps ran out before the success check held
	MissAnswer    = "answer"    // a line the answer was read from is not where it stood
)

// Stats count what a library saw, for metrics and a bench.
type Stats struct {
	Hits   int            `json:"hits"`   // runs that replayed to a verified end
	Misses map[string]int `json:"misses"` // by reason
	Heals  int            `json:"heals"`  // entries rewritten by a run the model finished
	Stored int            `json:"stored"` // entries written, heals included
}

// MissError is an entry the library could not use, and why.
type MissError struct {
	Reason string
	Err    error
	// Revision is the stored entry's: a run that learns anew replaces it.
	Revision int64
}

func (e *MissError) Error() string { return "learned: " + e.Reason + ": " + e.Err.Error() }
func (e *MissError) Unwrap() error { return e.Err }

// NewLibrary is a library over a driver.
func NewLibrary(d Driver, o Options) *Library {
	return &Library{d: d, sign: o.SignKey, stats: Stats{Misses: map[string]int{}}}
}

// Load reads the entry for key: ErrNotFound when there is none, a
// *MissError when there is one the library cannot use.
func (l *Library) Load(ctx context.Context, key string) (*Entry, error) {
	data, rev, err := l.d.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	body, err := l.verify(data)
	if err != nil {
		return nil, &MissError{MissUnsigned, err, rev}
	}
	e, err := Decode(body)
	if err != nil {
		return nil, &MissError{MissUnusable, err, rev}
	}
	if e.Key != key {
		return nil, &MissError{MissUnusable, fmt.Errorf("entry %s stored under %s", e.Key, key), rev}
	}
	e.Revision = rev
	return e, nil
}

// Save writes e as the revision after replaces (0: there was none). A
// run that learned the same template first wins: ErrConflict, and the
// caller keeps what is there.
func (l *Library) Save(ctx context.Context, e *Entry, replaces int64) error {
	body, err := Encode(e)
	if err != nil {
		return err
	}
	if err := l.d.Put(ctx, e.Key, replaces+1, l.signed(body)); err != nil {
		return err
	}
	e.Revision = replaces + 1
	l.count(func(s *Stats) {
		s.Stored++
		if replaces > 0 {
			s.Heals++
		}
	})
	return nil
}

// Delete drops the entry for key.
func (l *Library) Delete(ctx context.Context, key string) error { return l.d.Delete(ctx, key) }

// Listed is one stored entry, or why it cannot be read.
type Listed struct {
	Key   string
	Entry *Entry
	Err   error
}

// List reads every stored entry, in key order.
func (l *Library) List(ctx context.Context) ([]Listed, error) {
	keys, err := l.d.Keys(ctx)
	if err != nil {
		return nil, err
	}
	sort.Strings(keys)
	out := make([]Listed, 0, len(keys))
	for _, k := range keys {
		e, err := l.Load(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue // dropped since it was listed
		}
		out = append(out, Listed{Key: k, Entry: e, Err: err})
	}
	return out, nil
}

// Claim takes the lease to learn key, for ttl.
func (l *Library) Claim(ctx context.Context, key, holder string, ttl time.Duration) (bool, error) {
	return l.d.Claim(ctx, key, holder, ttl)
}

// Lead claims key's lease for holder, to learn it: ok when the lease is
// the holder's now. A run that stored the entry and gave the lease back
// between the caller's last read and the claim leaves the entry behind,
// so once the lease is the holder's Lead reads key again: an entry found
// then is returned (or its miss), and the lease given back.
func (l *Library) Lead(ctx context.Context, key, holder string, ttl time.Duration) (e *Entry, ok bool, err error) {
	if ok, err = l.d.Claim(ctx, key, holder, ttl); err != nil || !ok {
		return nil, false, err
	}
	if e, err = l.Load(ctx, key); errors.Is(err, ErrNotFound) {
		return nil, true, nil
	}
	_ = l.d.Release(context.WithoutCancel(ctx), key, holder)
	return e, false, err
}

// Release gives the lease back.
func (l *Library) Release(ctx context.Context, key, holder string) error {
	return l.d.Release(ctx, key, holder)
}

// Wait waits up to d for another run to store key, reading it every
// interval; it returns the entry once stored. When the lease falls free
// before that (its holder failed, or gave up), holder claims it for ttl
// and Wait returns (nil, ErrNotFound): the caller learns. At the end of d
// it returns ErrNotFound too, holding no lease.
func (l *Library) Wait(ctx context.Context, key, holder string, d, interval, ttl time.Duration) (*Entry, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, ErrNotFound
		case <-tick.C:
		}
		e, err := l.Load(ctx, key)
		if !errors.Is(err, ErrNotFound) {
			return e, err
		}
		e, ok, err := l.Lead(ctx, key, holder, ttl)
		switch {
		case err != nil || e != nil:
			return e, err
		case ok:
			return nil, ErrNotFound
		}
	}
}

// Hit counts a run that replayed to a verified end; Miss one that did
// not, by reason.
func (l *Library) Hit() { l.count(func(s *Stats) { s.Hits++ }) }

// Miss counts a miss by reason.
func (l *Library) Miss(reason string) { l.count(func(s *Stats) { s.Misses[reason]++ }) }

// Stats is a copy of the counts so far.
func (l *Library) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Misses = maps.Clone(l.stats.Misses)
	return s
}

func (l *Library) count(f func(*Stats)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.stats)
}

// Close closes the driver.
func (l *Library) Close() error { return l.d.Close() }

// A signed entry is one line "hmac-sha256 <hex>" and the body.
const signPrefix = "hmac-sha256 "

func (l *Library) signed(body []byte) []byte {
	if l.sign == nil {
		return body
	}
	m := hmac.New(sha256.New, l.sign)
	m.Write(body)
	return append([]byte(signPrefix+hex.EncodeToString(m.Sum(nil))+"\n"), body...)
}

func (l *Library) verify(data []byte) ([]byte, error) {
	head, body, found := bytes.Cut(data, []byte("\n"))
	signedEntry := found && bytes.HasPrefix(head, []byte(signPrefix))
	switch {
	case l.sign == nil && signedEntry:
		return body, nil // signed by a fleet that checks; this reader trusts its store
	case l.sign == nil:
		return data, nil
	case !signedEntry:
		return nil, errors.New("the entry is not signed, and this library reads signed entries only")
	}
	want, err := hex.DecodeString(string(bytes.TrimPrefix(head, []byte(signPrefix))))
	if err != nil {
		return nil, fmt.Errorf("the entry's signature: %w", err)
	}
	m := hmac.New(sha256.New, l.sign)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), want) {
		return nil, errors.New("the entry's signature does not match: written by another key, or changed")
	}
	return body, nil
}
