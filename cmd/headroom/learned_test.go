package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The learned commands, end to end: a task learned by one run and
// replayed by the next, listed, shown as steps, and dropped.
func TestLearnedThroughTheCommands(t *testing.T) {
	srv := animalSite(t)
	dir := t.TempDir()
	task := writeFile(t, dir, "zebra.yaml", fmt.Sprintf(`name: zebra-page
start_url: %s/
goal: Open the zebra facts.
max_steps: 4
success: {text: "sleeps standing up"}
`, srv.URL))
	store := "dir:" + filepath.Join(dir, "learned")
	first := runBinary(t, nil, "run", task, "--learned", store)
	second := runBinary(t, nil, "run", task, "--learned", store)
	for i, r := range []ran{first, second} {
		if r.code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", i+1, r.code, r.stderr)
		}
	}
	if res := decodeResult(t, "run 1", []byte(first.stdout)); res.Learned == nil || res.Learned.Stored != "learned" || res.Totals.Calls == 0 {
		t.Fatalf("run 1 learned %+v with %d calls", res.Learned, res.Totals.Calls)
	}
	res := decodeResult(t, "run 2", []byte(second.stdout))
	if res.Totals.Calls != 0 || res.Learned == nil || res.Learned.Replayed != 1 || res.Totals.TokensSaved == 0 {
		t.Fatalf("run 2: %d calls, learned %+v, saved %d", res.Totals.Calls, res.Learned, res.Totals.TokensSaved)
	}
	key := res.Learned.Key

	ls := runBinary(t, nil, "learned", "ls", "--learned", store)
	if ls.code != exitOK || !strings.Contains(ls.stdout, key) || !strings.Contains(ls.stdout, "zebra-page") {
		t.Fatalf("learned ls: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	show := runBinary(t, nil, "learned", "show", key, "--learned", store)
	if show.code != exitOK || !strings.Contains(show.stdout, `click the link "Zebra facts"`) || !strings.Contains(show.stdout, "navigated to /zebra") {
		t.Fatalf("learned show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	t.Logf("learned show:\n%s", show.stdout)
	if rm := runBinary(t, nil, "learned", "rm", key, "--learned", store); rm.code != exitOK {
		t.Fatalf("learned rm: exit %d\n%s", rm.code, rm.stderr)
	}
	if show := runBinary(t, nil, "learned", "show", key, "--learned", store); show.code == exitOK {
		t.Errorf("show after rm: exit 0\n%s", show.stdout)
	}
}

func TestLearnedStoreUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"learned", "ls"}, exitUsage, "no store"},
		{[]string{"learned", "ls", "--learned", "sqlite:x"}, exitUsage, "want off, memory, dir:PATH or redis://HOST:PORT"},
		{[]string{"learned", "ls", "--learned", "redis://:hunter2secret@127.0.0.1:1/"}, exitBudget, "store unavailable"},
		{[]string{"learned", "rm", "../etc", "--learned", "dir:" + t.TempDir()}, exitUsage, "key"},
	} {
		r := runBinary(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.says) || strings.Contains(r.stderr, "hunter2secret") {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", c.args, r.code, c.code, c.says, r.stderr)
		}
	}
}
