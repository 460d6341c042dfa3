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
	if code := run(context.Background(), []string{"calltypes", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	caps := map[string]float64{}
	for _, r := range rows {
		if len(r) != 8 || r["n"] != 1.0 || r["priority"] != "interactive" || r["source"] != "built-in" || r["reasoning_effort"] == "" || r["view"] == "" || r["page_tokens"] == 0.0 {
			t.Errorf("row %v: want name, max_tokens, n 1, priority interactive, an effort, a view and its page cap, built-in", r)
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
	if code := run(context.Background(), []string{"calltypes"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("want a header and four rows:\n%s", out.String())
	}
	if f := strings.Fields(lines[2]); len(f) != 9 || f[0] != "click-pick" || f[2] != "1" || f[3] != "interactive" || f[4] != "minimal" || f[5] != "-" || f[6] != "page" || f[7] != "2000" || f[8] != "built-in" {
		t.Errorf("click-pick row: %q", lines[2])
	}
}

func TestCalltypesUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"calltypes", "stray"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `unexpected argument "stray"`) {
		t.Errorf("stray argument: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"calltypes", "-h"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "-json") {
		t.Errorf("-h: exit %d, stdout %q", code, out.String())
	}
}

// A config's own type is listed beside the built-ins, and runs through
// headroom call on the embedded simulator when the config declares no
// deployments; a broken one is bad usage at its line.
func TestCallTypesDefinedInConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "types.yaml", `calltypes:
  extract-prices:
    max_tokens: 300
    priority: background
    system: You list every product on the page with its price.
    schema:
      type: object
      additionalProperties: false
      required: [items]
      properties:
        items:
          type: array
          items:
            type: object
            additionalProperties: false
            required: [name, price]
            properties:
              name: {type: string}
              price: {type: number}
`)
	code, out, errs := runArgs(t, "calltypes", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "extract-prices  300") || !strings.Contains(out, "config") {
		t.Errorf("calltypes --config: exit %d\n%s%s", code, out, errs)
	}
	in := writeFile(t, dir, "in.json", `{"page": {"url": "https://shop.example/", "text": "Walnut desk 640 EUR"}}`)
	code, out, errs = runArgs(t, "call", "extract-prices", "--config", cfg, "--input", in)
	if code != exitOK || !strings.Contains(out, `"items": []`) {
		t.Errorf("call extract-prices: exit %d\n%s%s", code, out, errs)
	}
	for _, c := range []struct{ body, want string }{
		{"calltypes:\n  x:\n    max_tokens: 50\n    system: s\n    schema: {type: object, properties: {a: {type: string}}, required: [a]}\n", `types.yaml:3: calltypes.x: calltypes: x: schema: #: set "additionalProperties": false`},
		{"calltypes:\n  x:\n    max_tokens: 999999\n    system: s\n    schema: {type: object, additionalProperties: false, properties: {}, required: []}\n", `types.yaml:3: calltypes.x: calltypes: x: max_tokens 999999 is above`},
		{"calltypes:\n  x:\n    max_tokens: 50\n    system: s\n    schema: {type: object}\n    colour: red\n", `types.yaml:6`},
		{"calltypes:\n  x:\n    max_tokens: 50\n    schema: {type: object, additionalProperties: false, properties: {}, required: []}\n", `needs a system prompt`},
		{"calltypes:\n  yes-no:\n    system: s\n    schema: {type: object}\n", `yes-no is a registered type`},
		{"calltypes:\n  x:\n    max_tokens: 50\n    system: s\n    schema: {type: object, additionalProperties: false, properties: {a: {$ref: 'https://x.example/s.json'}}, required: [a]}\n", `must hold all it refers to`},
	} {
		bad := writeFile(t, dir, "types.yaml", c.body)
		code, _, errs := runArgs(t, "call", "x", "--config", bad, "--input", in)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.body, code, errs, c.want)
		}
	}
}

// TestEveryCommandShowsTheConfigsWarnings: a command that reads the
// config only for its call types still says what the config warns of.
func TestEveryCommandShowsTheConfigsWarnings(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "headroom.yaml", "redis: redis://:hunter2@127.0.0.1:6379/0\ndeployments:\n  - {name: a, endpoint: 'https://a.openai.azure.com', model: gpt-4o, tpm: 1000, auth: {api_key_env: K}}\n")
	for _, args := range [][]string{
		{"calltypes", "--config", cfg},
		{"observe", "--config", cfg, "--view", "nosuchtype", "http://127.0.0.1:1/"},
	} {
		_, _, errs := runArgs(t, args...)
		if !strings.Contains(errs, "headroom "+args[0]+": warning: ") || !strings.Contains(errs, "password") {
			t.Errorf("%s: stderr does not show the config's warning:\n%s", args[0], errs)
		}
		if strings.Contains(errs, "hunter2") {
			t.Errorf("%s: the password reached stderr:\n%s", args[0], errs)
		}
	}
}
