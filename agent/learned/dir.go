package learned

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// dir keeps each entry in files of one directory, shared by the processes
// of one machine:
//
//	KEY.json   the entry's data, exactly as put
//	KEY.rev    its revision and the SHA-256 of the data: "3 9f86d0…"
//	KEY.lease  the lease: {"holder": "…", "until": unix nanoseconds}
//	.lock      locked (flock) around every read and write
//
// Each file is written to a temporary file and renamed over the old one;
// a put renames the data first and the revision second. A crash between
// the two leaves data whose hash is not the one KEY.rev names: that data
// is the next revision, as the put that crashed meant it to be.
type dir struct {
	path string

	// mu orders this process's goroutines: flock is held per open file,
	// so it does not exclude them from one another.
	mu     sync.Mutex
	lock   *os.File
	closed bool
}

// NewDir returns a driver that keeps entries in the directory path,
// creating it (mode 0700) if need be. Several processes may use one
// directory at once.
func NewDir(path string) (Driver, error) {
	if path == "" {
		return nil, errors.New("learned: dir store: no directory named")
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("learned: dir store: %w", err)
	}
	lock, err := openRegular(filepath.Join(path, ".lock"), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("learned: dir store: %w", err)
	}
	return &dir{path: path, lock: lock}, nil
}

// locked runs fn holding both this process's lock and the directory's.
func (d *dir) locked(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("learned: dir store %s is closed", d.path)
	}
	if err := flock(d.lock, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("learned: dir store %s: lock: %w", d.path, err)
	}
	defer flock(d.lock, syscall.LOCK_UN)
	return fn()
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func (d *dir) file(key, suffix string) string { return filepath.Join(d.path, key+suffix) }

func (d *dir) Get(ctx context.Context, key string) (data []byte, rev int64, err error) {
	if err := CheckKey(key); err != nil {
		return nil, 0, err
	}
	err = d.locked(ctx, func() error {
		data, rev, err = d.current(key)
		return err
	})
	if err == nil && rev == 0 {
		return nil, 0, ErrNotFound
	}
	return data, rev, err
}

// current reads key's entry; revision 0 when there is none.
func (d *dir) current(key string) ([]byte, int64, error) {
	data, err := readRegular(d.file(key, ".json"), MaxEntry)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	// A missing KEY.rev is revision 0 and no hash: the first put crashed
	// between its renames.
	var rev int64
	var sum string
	revPath := d.file(key, ".rev")
	b, err := readRegular(revPath, 256)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, 0, err
	default:
		n, h, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
		rev, err = strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || rev < 1 {
			return nil, 0, fmt.Errorf("learned: %s is damaged: want a revision and a SHA-256, have %q", revPath, b)
		}
		sum = h
	}
	if sum != hashOf(data) {
		rev++
	}
	return data, rev, nil
}

func hashOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func (d *dir) Put(ctx context.Context, key string, rev int64, data []byte) error {
	if err := checkPut(key, rev, data); err != nil {
		return err
	}
	return d.locked(ctx, func() error {
		cur, curRev, err := d.current(key)
		switch {
		case err != nil:
			return err
		case curRev == rev && bytes.Equal(cur, data):
			return nil
		case curRev != rev-1:
			return ErrConflict
		}
		if err := writeAtomic(d.file(key, ".json"), data); err != nil {
			return err
		}
		if err := writeAtomic(d.file(key, ".rev"), fmt.Appendf(nil, "%d %s\n", rev, hashOf(data))); err != nil {
			return err
		}
		return syncDir(d.path)
	})
}

func (d *dir) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return d.locked(ctx, func() error {
		// The data goes first: without it the entry is absent, whatever
		// KEY.rev still says.
		for _, suffix := range []string{".json", ".rev"} {
			if err := removeRegular(d.file(key, suffix)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (d *dir) Keys(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("learned: dir store: %w", err)
	}
	keys := []string{}
	for _, de := range des {
		key, ok := strings.CutSuffix(de.Name(), ".json")
		if ok && de.Type().IsRegular() && CheckKey(key) == nil {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

type dirLease struct {
	Holder string `json:"holder"`
	Until  int64  `json:"until"` // unix nanoseconds
}

func (d *dir) Claim(ctx context.Context, key, holder string, ttl time.Duration) (ok bool, err error) {
	if err := checkClaim(key, holder, ttl); err != nil {
		return false, err
	}
	err = d.locked(ctx, func() error {
		now := time.Now()
		l, err := d.lease(key)
		if err != nil {
			return err
		}
		if l.Holder != "" && l.Holder != holder && now.UnixNano() < l.Until {
			return nil
		}
		b, err := json.Marshal(dirLease{Holder: holder, Until: now.Add(ttl).UnixNano()})
		if err != nil {
			return err
		}
		if err := writeAtomic(d.file(key, ".lease"), b); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, err
}

func (d *dir) Release(ctx context.Context, key, holder string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkHolder(key, holder); err != nil {
		return err
	}
	return d.locked(ctx, func() error {
		l, err := d.lease(key)
		if err != nil || l.Holder != holder {
			return err
		}
		return removeRegular(d.file(key, ".lease"))
	})
}

// lease reads key's lease; the zero dirLease when there is none.
func (d *dir) lease(key string) (dirLease, error) {
	var l dirLease
	path := d.file(key, ".lease")
	b, err := readRegular(path, 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(b, &l); err != nil || l.Holder == "" {
		return l, fmt.Errorf("learned: %s is damaged: want {\"holder\": …, \"until\": …}", path)
	}
	return l, nil
}

func (d *dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.lock.Close()
}

// openRegular opens path without following a symlink or waiting on a
// FIFO, and refuses anything but a regular file: a link in the store's
// directory could point a write anywhere.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := safefile.OpenRegular(path, flag, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("learned: %s is a symlink: the store follows none", path)
	}
	if err != nil {
		return nil, fmt.Errorf("learned: %w", err)
	}
	return f, nil
}

// readRegular reads a regular file of at most limit bytes.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("learned: %s is over %d bytes", path, limit)
	}
	return b, nil
}

// removeRegular removes path if it is there; a symlink or anything else
// that is not a regular file is refused, not removed.
func removeRegular(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("learned: %s is a symlink: the store follows none", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("learned: %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeAtomic replaces path with data, mode 0600: written and synced to a
// temporary file, then renamed, so a reader sees the old file or the new,
// never part of one. The old file must be absent or regular.
func writeAtomic(path string, data []byte) (err error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("learned: %s is a symlink: the store follows none", path)
		}
		return fmt.Errorf("learned: %s is not a regular file (%v)", path, fi.Mode().Type())
	}
	// A leading '.' keeps it out of Keys and clear of every key's files.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// syncDir makes the renames in path durable.
func syncDir(path string) error { return safefile.SyncDir(path) }
