// Package learnedtest is the conformance suite every learned.Driver must
// pass. A driver's test calls Run with a function that makes a driver with
// a store of its own: empty, and closed when the test ends.
package learnedtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
)

// Run runs the suite; its subtests run in parallel, each on a driver of
// its own.
func Run(t *testing.T, newDriver func(t *testing.T) learned.Driver) {
	tests := []struct {
		name string
		fn   func(*testing.T, learned.Driver)
	}{
		{"GetMissing", testGetMissing},
		{"PutThenGet", testPutThenGet},
		{"RevisionsInOrder", testRevisions},
		{"RetriedWrite", testRetriedWrite},
		{"KeysSorted", testKeys},
		{"Delete", testDelete},
		{"ConcurrentPutsOneWins", testConcurrentPuts},
		{"Lease", testLease},
		{"LeaseExpires", testLeaseExpiry},
		{"BigEntryRefused", testBigEntry},
		{"BadKeyRefused", testBadKey},
		{"BadArgumentsRefused", testBadArguments},
		{"CancelledContext", testCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newDriver(t))
		})
	}
}

var bg = context.Background()

func put(t *testing.T, d learned.Driver, key string, rev int64, data string) {
	t.Helper()
	if err := d.Put(bg, key, rev, []byte(data)); err != nil {
		t.Fatalf("Put(%q, %d, %q) = %v", key, rev, data, err)
	}
}

func wantEntry(t *testing.T, d learned.Driver, key string, rev int64, data string) {
	t.Helper()
	got, gotRev, err := d.Get(bg, key)
	if err != nil || gotRev != rev || string(got) != data {
		t.Fatalf("Get(%q) = %q, %d, %v; want %q, %d", key, got, gotRev, err, data, rev)
	}
}

func wantConflict(t *testing.T, d learned.Driver, key string, rev int64, data string) {
	t.Helper()
	if err := d.Put(bg, key, rev, []byte(data)); !errors.Is(err, learned.ErrConflict) {
		t.Fatalf("Put(%q, %d, %q) = %v, want ErrConflict", key, rev, data, err)
	}
}

func testGetMissing(t *testing.T, d learned.Driver) {
	if data, rev, err := d.Get(bg, "never-put"); !errors.Is(err, learned.ErrNotFound) {
		t.Fatalf("Get of a key never put = %q, %d, %v; want ErrNotFound", data, rev, err)
	}
}

func testPutThenGet(t *testing.T, d learned.Driver) {
	data := `{"steps":[{"act":"click","on":"Sign in"}]}`
	put(t, d, "login.v1", 1, data)
	wantEntry(t, d, "login.v1", 1, data)
	// What Get returns is the caller's: changing it changes nothing stored.
	got, _, _ := d.Get(bg, "login.v1")
	clear(got)
	wantEntry(t, d, "login.v1", 1, data)
	// Bytes of every value survive, and so does an empty entry.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if err := d.Put(bg, "binary", 1, all); err != nil {
		t.Fatal(err)
	}
	wantEntry(t, d, "binary", 1, string(all))
	put(t, d, "empty", 1, "")
	wantEntry(t, d, "empty", 1, "")
}

func testRevisions(t *testing.T, d learned.Driver) {
	put(t, d, "k", 1, "one")
	wantConflict(t, d, "k", 1, "another one")
	wantConflict(t, d, "k", 3, "three")
	wantEntry(t, d, "k", 1, "one")
	put(t, d, "k", 2, "two")
	wantEntry(t, d, "k", 2, "two")
	wantConflict(t, d, "k", 1, "one") // an old revision is no retry now
	wantConflict(t, d, "absent", 2, "two")
	if _, _, err := d.Get(bg, "absent"); !errors.Is(err, learned.ErrNotFound) {
		t.Errorf("a conflicting put stored something: %v", err)
	}
}

func testRetriedWrite(t *testing.T, d learned.Driver) {
	put(t, d, "k", 1, "one")
	// The same write again, as a client re-sends one whose answer it lost.
	put(t, d, "k", 1, "one")
	wantEntry(t, d, "k", 1, "one")
	put(t, d, "k", 2, "one") // a new revision with the same data is a write
	wantEntry(t, d, "k", 2, "one")
	put(t, d, "k", 2, "one")
	wantEntry(t, d, "k", 2, "one")
}

func testKeys(t *testing.T, d learned.Driver) {
	keys, err := d.Keys(bg)
	if err != nil || len(keys) != 0 {
		t.Fatalf("Keys of an empty store = %q, %v", keys, err)
	}
	want := []string{"A-upper", "b.2", "b_1", "z", "zz-9"}
	for _, k := range []string{"zz-9", "b_1", "A-upper", "z", "b.2"} {
		put(t, d, k, 1, "data of "+k)
	}
	// A lease is no entry.
	if _, err := d.Claim(bg, "leased-only", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Claim(bg, "z", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err = d.Keys(bg)
	if err != nil || !slices.Equal(keys, want) {
		t.Fatalf("Keys = %q, %v; want %q", keys, err, want)
	}
}

func testDelete(t *testing.T, d learned.Driver) {
	put(t, d, "k", 1, "one")
	put(t, d, "k", 2, "two")
	put(t, d, "other", 1, "kept")
	if err := d.Delete(bg, "k"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Get(bg, "k"); !errors.Is(err, learned.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := d.Delete(bg, "k"); err != nil {
		t.Errorf("Delete of an absent key = %v", err)
	}
	if err := d.Delete(bg, "never-put"); err != nil {
		t.Errorf("Delete of a key never put = %v", err)
	}
	if keys, err := d.Keys(bg); err != nil || !slices.Equal(keys, []string{"other"}) {
		t.Errorf("Keys after Delete = %q, %v", keys, err)
	}
	wantEntry(t, d, "other", 1, "kept")
	// A deleted key starts again at revision 1.
	wantConflict(t, d, "k", 3, "three")
	put(t, d, "k", 1, "again")
	wantEntry(t, d, "k", 1, "again")
}

func testConcurrentPuts(t *testing.T, d learned.Driver) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = d.Put(bg, "race", 1, fmt.Appendf(nil, "writer %d", i))
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both put revision 1", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, learned.ErrConflict):
			t.Errorf("writer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer put revision 1")
	}
	wantEntry(t, d, "race", 1, fmt.Sprintf("writer %d", winner))
}

func claim(t *testing.T, d learned.Driver, key, holder string, ttl time.Duration, want bool) {
	t.Helper()
	got, err := d.Claim(bg, key, holder, ttl)
	if err != nil || got != want {
		t.Fatalf("Claim(%q, %q, %v) = %v, %v; want %v", key, holder, ttl, got, err, want)
	}
}

func release(t *testing.T, d learned.Driver, key, holder string) {
	t.Helper()
	if err := d.Release(bg, key, holder); err != nil {
		t.Fatalf("Release(%q, %q) = %v", key, holder, err)
	}
}

func testLease(t *testing.T, d learned.Driver) {
	claim(t, d, "k", "run-a", time.Minute, true)
	claim(t, d, "k", "run-b", time.Minute, false)
	claim(t, d, "k", "run-a", time.Minute, true) // renewed
	claim(t, d, "other", "run-b", time.Minute, true)
	release(t, d, "k", "run-b") // not run-b's: nothing happens
	claim(t, d, "k", "run-b", time.Minute, false)
	release(t, d, "k", "run-a")
	claim(t, d, "k", "run-b", time.Minute, true)
	claim(t, d, "k", "run-a", time.Minute, false)
	release(t, d, "k", "run-b")
	release(t, d, "k", "run-b") // twice is fine
	release(t, d, "never-claimed", "run-a")
	// A lease is apart from the entry: deleting the entry leaves it.
	claim(t, d, "k", "run-c", time.Minute, true)
	put(t, d, "k", 1, "one")
	if err := d.Delete(bg, "k"); err != nil {
		t.Fatal(err)
	}
	claim(t, d, "k", "run-a", time.Minute, false)
}

func testLeaseExpiry(t *testing.T, d learned.Driver) {
	claim(t, d, "k", "run-a", 50*time.Millisecond, true)
	time.Sleep(120 * time.Millisecond)
	claim(t, d, "k", "run-b", time.Minute, true)
	claim(t, d, "k", "run-a", time.Minute, false)
	// A renewal moves the expiry: a 100 ms lease renewed for 500 ms
	// still holds 150 ms after the renewal.
	claim(t, d, "r", "run-a", 100*time.Millisecond, true)
	time.Sleep(60 * time.Millisecond)
	claim(t, d, "r", "run-a", 500*time.Millisecond, true)
	time.Sleep(150 * time.Millisecond)
	claim(t, d, "r", "run-b", time.Minute, false)
}

func testBigEntry(t *testing.T, d learned.Driver) {
	exact := bytes.Repeat([]byte("x"), learned.MaxEntry)
	if err := d.Put(bg, "exact", 1, exact); err != nil {
		t.Fatalf("Put of exactly MaxEntry bytes = %v", err)
	}
	if got, _, err := d.Get(bg, "exact"); err != nil || !bytes.Equal(got, exact) {
		t.Fatalf("Get of a MaxEntry entry: %d bytes, %v", len(got), err)
	}
	big := append(exact, 'x')
	err := d.Put(bg, "big", 1, big)
	if err == nil || errors.Is(err, learned.ErrConflict) || errors.Is(err, learned.ErrUnavailable) {
		t.Fatalf("Put of MaxEntry+1 bytes = %v, want a size error", err)
	}
	if !strings.Contains(err.Error(), "big") || !strings.Contains(err.Error(), fmt.Sprint(learned.MaxEntry)) {
		t.Errorf("the error names neither the key nor the limit: %v", err)
	}
	if _, _, err := d.Get(bg, "big"); !errors.Is(err, learned.ErrNotFound) {
		t.Errorf("a refused entry was stored: %v", err)
	}
}

// badKeys are refused by CheckKey; each could name a file outside the
// store or another key's file.
var badKeys = []string{"", ".", "..", ".hidden", "a/b", "../etc", `a\b`, "a b", "a:b", "a*", "é", "a\x00b", strings.Repeat("k", 201)}

func testBadKey(t *testing.T, d learned.Driver) {
	for _, k := range badKeys {
		if learned.CheckKey(k) == nil {
			t.Fatalf("CheckKey(%q) = nil", k)
		}
		if _, _, err := d.Get(bg, k); err == nil || errors.Is(err, learned.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want a key error", k, err)
		}
		if err := d.Put(bg, k, 1, []byte("x")); err == nil {
			t.Errorf("Put(%q) accepted", k)
		}
		if err := d.Delete(bg, k); err == nil {
			t.Errorf("Delete(%q) accepted", k)
		}
		if _, err := d.Claim(bg, k, "h", time.Minute); err == nil {
			t.Errorf("Claim(%q) accepted", k)
		}
		if err := d.Release(bg, k, "h"); err == nil {
			t.Errorf("Release(%q) accepted", k)
		}
	}
	if keys, err := d.Keys(bg); err != nil || len(keys) != 0 {
		t.Errorf("after bad keys, Keys = %q, %v", keys, err)
	}
	long := strings.Repeat("k", 200)
	put(t, d, long, 1, "x")
	wantEntry(t, d, long, 1, "x")
}

func testBadArguments(t *testing.T, d learned.Driver) {
	for _, rev := range []int64{0, -1} {
		if err := d.Put(bg, "k", rev, []byte("x")); err == nil || errors.Is(err, learned.ErrConflict) {
			t.Errorf("Put at revision %d = %v, want an argument error", rev, err)
		}
	}
	if _, err := d.Claim(bg, "k", "", time.Minute); err == nil {
		t.Error("Claim with no holder accepted")
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := d.Claim(bg, "k", "h", ttl); err == nil {
			t.Errorf("Claim for %v accepted", ttl)
		}
	}
	if err := d.Release(bg, "k", ""); err == nil {
		t.Error("Release with no holder accepted")
	}
	claim(t, d, "k", "h", time.Minute, true) // none of them took it
}

func testCancelled(t *testing.T, d learned.Driver) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, _, err := d.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v", err)
	}
	if err := d.Put(ctx, "k", 1, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v", err)
	}
	if _, err := d.Claim(ctx, "k", "h", time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Claim with a cancelled context = %v", err)
	}
	if _, _, err := d.Get(bg, "k"); !errors.Is(err, learned.ErrNotFound) {
		t.Errorf("a cancelled put stored something: %v", err)
	}
}
