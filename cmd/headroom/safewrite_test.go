package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Outputs that are a device or a directory are refused before anything
// runs, and nothing is written beside them.
func TestOutputsRefuseDevicesAndDirectories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	task := writeFile(t, dir, "task.yaml", "name: a\nstart_url: http://127.0.0.1:1/\ngoal: do it\n")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", task, "--record-har", "/dev/full"},
		{"run", task, "--record-har", sub},
		{"run", task, "--record-calls", "/dev/full"},
		{"run", task, "--record-calls", sub},
		{"record", "http://127.0.0.1:1/", "--out", "/dev/full"},
		{"record", "http://127.0.0.1:1/", "--out", sub},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "refusing to write") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a refusal", args, code, errb.String())
		}
	}
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("/dev/full replaced: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}
