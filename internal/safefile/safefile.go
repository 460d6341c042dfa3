// Package safefile reads and writes the files a user names on the command
// line or in a task, so that a device, a pipe, a directory or a symlink in
// the wrong place is an error instead of a hang, a replaced device or a
// write somewhere else.
package safefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ReadFile reads a regular file of at most limit bytes; what names the
// kind of file wanted (such as "a YAML file") for the error. The file is
// opened without blocking, so a FIFO is refused at once rather than
// waited on, and checked after the open, so what is read is what was
// checked; the read stops one byte past the limit in case the file grew.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): want %s", path, kind(fi.Mode()), what)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes: at most %d are read", path, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes: at most %d are read", path, limit, limit)
	}
	return data, nil
}

// ReadAll reads what r holds up to limit bytes, for a stream that is no
// file (standard input): more than limit is an error, and so is ctx ending
// first (SIGTERM), whatever the read is waiting on. A read still waiting
// then is left to end with the process.
func ReadAll(ctx context.Context, r io.Reader, limit int64, what string) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		done <- result{data, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-done:
		if res.err == nil && int64(len(res.data)) > limit {
			res.err = fmt.Errorf("%s: over %d bytes: at most %d are read", what, limit, limit)
		}
		return res.data, res.err
	}
}

// kind names a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// CheckTarget says whether path may be written: it must be new, or a
// regular file. A directory, a device, a pipe or a symlink is refused
// (a symlink could point anywhere), and so is a path whose folder does
// not exist.
func CheckTarget(path string) error {
	return checkTarget(path)
}

// PrepareTarget is CheckTarget for an output a command is about to
// write: a folder the path names that does not exist yet is made first,
// as a person giving --out new/run.har expects.
func PrepareTarget(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return checkTarget(path)
}

func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir, derr := os.Stat(filepath.Dir(path))
		if derr != nil {
			return derr
		}
		if !dir.IsDir() {
			return fmt.Errorf("%s: %s is not a directory", path, filepath.Dir(path))
		}
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %s, not a regular file: refusing to write over it", path, kind(fi.Mode()))
	}
	return nil
}

// WriteFile writes what write produces to path, all or nothing: to a
// temporary file in the same directory, then renamed over path. path
// must pass CheckTarget. On any error the temporary file is removed and
// path is as it was.
func WriteFile(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	if err := CheckTarget(path); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// The target may have changed since it was checked: check again, as
	// close to the rename as can be.
	if err = CheckTarget(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteBytes is WriteFile for data held in memory.
func WriteBytes(path string, data []byte, perm fs.FileMode) error {
	return WriteFile(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// OpenAppend opens path for appending, creating it if it is new. Only a
// regular file is opened: a symlink is not followed, and a FIFO or a
// device is refused without waiting on it.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	if err := CheckTarget(path); err != nil {
		return nil, err
	}
	return OpenRegular(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, perm)
}

// OpenRegular opens path with flag (os.O_RDONLY, os.O_RDWR|os.O_CREATE,
// ...) when it is a regular file: a symlink is not followed (the error
// is syscall.ELOOP), and a FIFO or a device is refused without waiting
// on it. For a store that keeps its own files in its own directory.
func OpenRegular(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %s, not a regular file: refusing it", path, kind(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SyncDir makes the renames in dir durable.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Within joins name to dir, refusing a name that would leave dir: one
// that is absolute, holds a path separator or is "..". A name is a file
// name, not a path.
func Within(dir, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// CheckName refuses what is not a plain file name: empty, ".", "..", or
// holding a path separator or a NUL.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("an empty file name")
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a file name", name)
	}
	if strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%s holds a path separator: want a file name in the folder, such as shot.png", quoteCap(name))
	}
	return nil
}

// quoteCap quotes s for a message, cut to 80 characters.
func quoteCap(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		return fmt.Sprintf("%q…", string(r[:80]))
	}
	return fmt.Sprintf("%q", s)
}

// Same reports whether a and b name one file: the same file when both
// exist (a link or another spelling of the path), else the same absolute
// path.
func Same(a, b string) bool {
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}
