package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestCalltypesJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCalltypes(context.Background(), []string{"--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	caps := map[string]float64{}
	for _, r := range rows {
		if len(r) != 4 || r["n"] != 1.0 || r["priority"] != "interactive" {
			t.Errorf("row %v: want name, max_tokens, n 1, priority interactive", r)
		}
		caps[r["name"].(string)] = r["max_tokens"].(float64)
	}
	for _, name := range []string{"planning", "click-pick", "yes-no", "summarize"} {
		if caps[name] <= 0 {
			t.Errorf("%s missing or uncapped: %v", name, caps)
		}
	}
	if caps["click-pick"] > 256 || caps["yes-no"] > 64 {
		t.Errorf("small types are not small: %v", caps)
	}
}

func TestCalltypesTable(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCalltypes(context.Background(), nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("want a header and four rows:\n%s", out.String())
	}
	if f := strings.Fields(lines[2]); len(f) != 4 || f[0] != "click-pick" || f[2] != "1" || f[3] != "interactive" {
		t.Errorf("click-pick row: %q", lines[2])
	}
}

func TestCalltypesUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCalltypes(context.Background(), []string{"stray"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `unexpected argument "stray"`) {
		t.Errorf("stray argument: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	if code := runCalltypes(context.Background(), []string{"-h"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "-json") {
		t.Errorf("-h: exit %d, stdout %q", code, out.String())
	}
}
