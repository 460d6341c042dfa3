package learned_test

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
	_ "github.com/headroom-agent/headroom/agent/learned/learnedredis" // redis:// specs
	"github.com/headroom-agent/headroom/internal/redistest"
)

func TestOpenOff(t *testing.T) {
	for _, spec := range []string{"", "off"} {
		if d, err := learned.Open(bg, spec); d != nil || err != nil {
			t.Errorf("Open(%q) = %v, %v; want no store", spec, d, err)
		}
	}
}

func TestOpenMemoryAndDir(t *testing.T) {
	d, err := learned.Open(bg, "memory")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put(bg, "k", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	d.Close()

	path := filepath.Join(t.TempDir(), "learned")
	d, err = learned.Open(bg, "dir:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put(bg, "k", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	other := newDir(t, path)
	if _, rev, err := other.Get(bg, "k"); err != nil || rev != 1 {
		t.Errorf("the directory Open named holds %d, %v", rev, err)
	}
}

func TestOpenRedis(t *testing.T) {
	url := redistest.URL(t)
	d, err := learned.Open(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	key := "open-test-" + rand.Text()
	if err := d.Put(bg, key, 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := d.Get(bg, key); err != nil || string(data) != "x" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	if err := d.Delete(bg, key); err != nil {
		t.Fatal(err)
	}
	// Open made the client, so Close closes it.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Get(bg, key); err == nil {
		t.Error("Get after Close succeeded")
	}
}

func TestOpenBadSpecs(t *testing.T) {
	for _, spec := range []string{"mem", "Memory", "dir", "/var/lib/learned", "redis:", "http://127.0.0.1:6379", "postgres://user:hunter2secret@db/x"} {
		d, err := learned.Open(bg, spec)
		if d != nil || err == nil || !strings.Contains(err.Error(), "want off, memory, dir:PATH or redis://HOST:PORT") {
			t.Errorf("Open(%q) = %v, %v; want the list of what is accepted", spec, d, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q): the error shows the password: %v", spec, err)
		}
	}
	if _, err := learned.Open(bg, "dir:"); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf(`Open("dir:") = %v, want it to ask for a directory`, err)
	}
}

// A password in the URL appears in no error, whatever went wrong.
func TestOpenRedactsPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	for _, spec := range []string{
		"redis://:hunter2secret@127.0.0.1:1/",       // nothing listens
		"redis://user:hunter2secret@127.0.0.1:1/0",  // the same, with a user
		"redis://:hunter2secret@127.0.0.1:1/notadb", // go-redis refuses it
		"redis://:hunter2secret@127.0.0.1:bad/",     // url.Parse refuses it
		"rediss://:hunter2secret@127.0.0.1:1/?unknown=1",
	} {
		d, err := learned.Open(ctx, spec)
		if d != nil || err == nil {
			t.Errorf("Open(%q) = %v, %v; want an error", spec, d, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q): the error shows the password: %v", spec, err)
		}
		if !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Open(%q): the error does not say which server: %v", spec, err)
		}
	}
	_, err := learned.Open(ctx, "redis://:hunter2secret@127.0.0.1:1/")
	if !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("no Redis at the URL: %v, want ErrUnavailable", err)
	}
}
