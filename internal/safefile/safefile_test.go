package safefile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteFileRefusesDevicesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"/dev/full", "/dev/null", dir} {
		if err := WriteBytes(p, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: written over", p)
		}
	}
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("/dev/full was replaced: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(t.TempDir(), "out"), link); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(link, []byte("x"), 0o644); err == nil {
		t.Error("a symlink was followed")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	p := filepath.Join(dir, "a.json")
	for _, s := range []string{"one", "two"} {
		if err := WriteBytes(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("read back %q", b)
	}
}

func TestOpenAppendAndReadFileDoNotWaitOnAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		f, err := OpenAppend(fifo, 0o600)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	go func() { _, err := ReadFile(fifo, 10, "a file"); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Error("a FIFO was opened")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("hangs on a FIFO")
		}
	}
	if _, err := OpenAppend("/dev/null", 0o600); err == nil {
		t.Error("a device was opened for appending")
	}
}

func TestWithinRefusesEscapes(t *testing.T) {
	for _, n := range []string{"../x.png", "a/b.png", "/etc/x", "..", "", `a\b.png`} {
		if _, err := Within("d", n); err == nil {
			t.Errorf("%q accepted", n)
		}
	}
	if p, err := Within("d", "shot.png"); err != nil || p != filepath.Join("d", "shot.png") {
		t.Errorf("shot.png: %q %v", p, err)
	}
}

func TestCheckJSONDepth(t *testing.T) {
	if err := CheckJSONDepth([]byte(strings.Repeat("[", 100000)), 100); err == nil {
		t.Error("100k [ passed")
	}
	if err := CheckJSONDepth([]byte(`{"a": "[[[[[[", "b": "\"[[[["}`), 2); err != nil {
		t.Errorf("brackets in strings counted: %v", err)
	}
}

func TestSame(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{a, a, true},
		{a, filepath.Join(dir, ".", "a.jsonl"), true},
		{a, link, true},
		{a, filepath.Join(dir, "b.jsonl"), false},
		{filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "x", "..", "new.jsonl"), true},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

func TestReadFileRefusesDevicesAndBounds(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, make([]byte, 11), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file (a character device)"},
		{t.TempDir(), "not a regular file (a directory)"},
		{big, "11 bytes: at most 10 are read"},
	} {
		if _, err := ReadFile(c.path, 10, "a file"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFile(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

// A stream is read to its bound and no further, and a read that waits on
// a writer that never writes ends when the context does.
func TestReadAllBoundsAStreamAndStopsWithTheContext(t *testing.T) {
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	if _, err := ReadAll(context.Background(), zero, 1<<20, "standard input"); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := ReadAll(ctx, r, 10, "standard input"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a silent pipe: %v", err)
	}
	b, err := ReadAll(context.Background(), strings.NewReader("{}"), 10, "standard input")
	if err != nil || string(b) != "{}" {
		t.Errorf("a short stream: %q, %v", b, err)
	}
}

// Whatever a file or a stream holds, it is read whole when it fits the
// limit and refused, naming it, when it does not; at most one byte past
// the limit is ever read. go test -fuzz FuzzReadBounded ./internal/safefile
func FuzzReadBounded(f *testing.F) {
	f.Add([]byte("items: []\n"), uint16(64))
	f.Add([]byte("0123456789"), uint16(10))
	f.Add([]byte("0123456789a"), uint16(10))
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0}, uint16(0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		path := filepath.Join(dir, "in")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fits := len(data) <= int(limit)
		got, err := ReadFile(path, int64(limit), "a file")
		check := func(from string, got []byte, err error) {
			switch {
			case fits && (err != nil || !bytes.Equal(got, data)):
				t.Fatalf("%s: %d bytes under a limit of %d: read %d, %v", from, len(data), limit, len(got), err)
			case !fits && (err == nil || !strings.Contains(err.Error(), from)):
				t.Fatalf("%s: %d bytes over a limit of %d: %v", from, len(data), limit, err)
			case !fits && got != nil && len(got) > int(limit)+1:
				t.Fatalf("%s: %d bytes read past a limit of %d", from, len(got), limit)
			}
		}
		check(path, got, err)
		got, err = ReadAll(context.Background(), bytes.NewReader(data), int64(limit), "standard input")
		check("standard input", got, err)
	})
}
