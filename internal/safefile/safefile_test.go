package safefile

import (
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
