package learned_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/agent/learned/learnedtest"
)

var bg = context.Background()

func newDir(t *testing.T, path string) learned.Driver {
	t.Helper()
	d, err := learned.NewDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDir(t *testing.T) {
	learnedtest.Run(t, func(t *testing.T) learned.Driver {
		return newDir(t, t.TempDir())
	})
}

// Two handles on one directory are two processes sharing it: each sees the
// other's writes, and their puts race as one store's do.
func TestDirShared(t *testing.T) {
	path := t.TempDir()
	a, b := newDir(t, path), newDir(t, path)
	if err := a.Put(bg, "k", 1, []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if data, rev, err := b.Get(bg, "k"); err != nil || rev != 1 || string(data) != "from a" {
		t.Fatalf("b sees %q, %d, %v", data, rev, err)
	}
	if err := b.Put(bg, "k", 1, []byte("from b")); !errors.Is(err, learned.ErrConflict) {
		t.Fatalf("b put over a's revision: %v", err)
	}
	if ok, err := a.Claim(bg, "k", "a", time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := b.Claim(bg, "k", "b", time.Minute); ok || err != nil {
		t.Fatalf("b took a's lease: %v, %v", ok, err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		d := []learned.Driver{a, b}[i%2]
		wg.Go(func() {
			err := d.Put(bg, "race", 1, fmt.Appendf(nil, "%d", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, learned.ErrConflict):
				t.Errorf("put %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d puts of revision 1 succeeded across two handles, want 1", won)
	}
}

func TestDirRefusesSymlinks(t *testing.T) {
	path := t.TempDir()
	d := newDir(t, path)
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("not an entry"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(path, "linked.json")); err != nil {
		t.Fatal(err)
	}
	_, _, err := d.Get(bg, "linked")
	if err == nil || errors.Is(err, learned.ErrNotFound) || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Get through a symlink = %v, want a symlink error", err)
	}
	if err := d.Put(bg, "linked", 1, []byte("x")); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Put over a symlink = %v", err)
	}
	if err := d.Delete(bg, "linked"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Delete of a symlink = %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "not an entry" {
		t.Errorf("the link's target was changed: %q", b)
	}
	if keys, err := d.Keys(bg); err != nil || len(keys) != 0 {
		t.Errorf("Keys lists a symlink: %q, %v", keys, err)
	}
	if err := os.Symlink(outside, filepath.Join(path, "lease.lease")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Claim(bg, "lease", "h", time.Minute); err == nil {
		t.Error("Claim through a symlinked lease accepted")
	}
	// A symlinked lock is refused when the store is opened.
	other := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(other, ".lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := learned.NewDir(other); err == nil {
		t.Error("NewDir with a symlinked lock file accepted")
	}
}

func TestDirFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "learned")
	d := newDir(t, path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	entry := `{"steps":[]}`
	if err := d.Put(bg, "k", 1, []byte(entry)); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(bg, "k", 2, []byte(entry)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Claim(bg, "k", "h", time.Minute); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
		fi, err := de.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", de.Name(), fi.Mode().Perm())
		}
	}
	if got := strings.Join(names, " "); got != ".lock k.json k.lease k.rev" {
		t.Errorf("files %q: want the lock, the entry, its lease and revision, no temporary file", got)
	}
	// The entry file is the entry, readable as it was put.
	if b, err := os.ReadFile(filepath.Join(path, "k.json")); err != nil || string(b) != entry {
		t.Errorf("k.json = %q, %v", b, err)
	}
}

// A put that stopped between writing the data and writing its revision
// (the process was killed) left the next revision: readers see it, and a
// retry of that put succeeds.
func TestDirInterruptedPut(t *testing.T) {
	path := t.TempDir()
	d := newDir(t, path)
	if err := d.Put(bg, "k", 1, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "k.json"), []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, rev, err := d.Get(bg, "k"); err != nil || rev != 2 || string(data) != "two" {
		t.Fatalf("after an interrupted put: %q, %d, %v; want two at revision 2", data, rev, err)
	}
	if err := d.Put(bg, "k", 2, []byte("two")); err != nil {
		t.Fatalf("retry of the interrupted put: %v", err)
	}
	if err := d.Put(bg, "k", 3, []byte("three")); err != nil {
		t.Fatal(err)
	}
	// The first put stopped the same way: no revision file at all.
	if err := os.WriteFile(filepath.Join(path, "new.json"), []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, rev, err := d.Get(bg, "new"); err != nil || rev != 1 || string(data) != "first" {
		t.Fatalf("a first put interrupted: %q, %d, %v", data, rev, err)
	}
	// A damaged revision file is an error that names it, not a guess.
	if err := os.WriteFile(filepath.Join(path, "k.rev"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Get(bg, "k"); err == nil || !strings.Contains(err.Error(), "k.rev") {
		t.Errorf("damaged revision file: %v", err)
	}
}

func TestDirClosed(t *testing.T) {
	d, err := learned.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(bg, "k", 1, []byte("x")); err == nil {
		t.Error("Put after Close accepted")
	}
	if err := d.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
