package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

func TestLoadTaskReadsEveryField(t *testing.T) {
	path := filepath.Join("testdata", "full.yaml")
	got, err := LoadTask(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Task{
		Name:           "cheapest-desk",
		StartURL:       "http://127.0.0.1:8391/shop/",
		Goal:           "Find the cheapest {{item}} and report its price.",
		Params:         map[string]*string{"item": ptr("desk"), "max_price": nil},
		Learn:          LearnOff,
		Dialogs:        browser.DismissDialogs,
		AllowedDomains: []string{"127.0.0.1", ".example.com"},
		MaxSteps:       12,
		TokenBudget:    60000,
		Deadline:       Duration(2 * time.Minute),
		Priority:       calltypes.Background,
		Success:        &Success{Text: "EUR", URL: "/shop/item/[0-9]+"},
		AnswerType:     "extract-prices",
		Replay:         filepath.Join("testdata", "shop.har"),
		Cassette:       "/var/cassettes/shop.jsonl",
		StorageState:   filepath.Join("testdata", "shop-session.json"),
		Files:          map[string]string{"resume": filepath.Join("testdata", "cv.pdf")},
		Secrets: map[string]SecretSource{
			"shop_password": {Env: "SHOP_PASSWORD", Domains: []string{"127.0.0.1"}},
			"shop_user":     {File: "/run/secrets/shop_user"},
		},
		Steps: []TaskStep{
			{Step: browser.Step{Type: "#q", Text: "desk", Submit: true}},
			{Step: browser.Step{Wait: "network"}},
			{Step: browser.Step{Select: "#sort", Option: "price"}},
			{Step: browser.Step{Navigate: "/shop/?q={{item}}"}},
			{Step: browser.Step{Scroll: "down"}},
			{Step: browser.Step{Press: "Ctrl+A"}},
			{Step: browser.Step{Hover: "#menu"}},
			{Step: browser.Step{Upload: "#resume", File: "resume"}},
			{Step: browser.Step{Back: true}},
			{Step: browser.Step{Tab: 2}},
			{Step: browser.Step{CloseTab: true}},
			{Step: browser.Step{Click: "//a[contains(., 'Walnut')]", Expect: "In stock"}},
			{Step: browser.Step{Screenshot: "desk.png"}},
			{Agent: "open the cheapest desk"},
		},
		File: path,
	}
	if err := want.Success.compile(); err != nil { // as loading does, once
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadTask(%s) =\n%+v\nwant\n%+v", path, got, want)
	}
	// The file must exercise every field, so a field added to Task or
	// browser.Step without decoding support shows up here.
	allSet(t, "Task", reflect.ValueOf(*got))
	var steps reflect.Value = reflect.New(reflect.TypeOf(TaskStep{})).Elem()
	for _, s := range got.Steps {
		mergeSet(steps, reflect.ValueOf(s))
	}
	allSet(t, "TaskStep", steps)

	// JSON carries the same task, the deadline as text.
	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"deadline":"2m0s"`) {
		t.Errorf("JSON deadline is not text: %s", js)
	}
	var back Task
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	back.File = got.File
	if err := back.Success.compile(); err != nil { // as Run does for a task it did not load
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, got) {
		t.Errorf("JSON round trip =\n%+v\nwant\n%+v", back, got)
	}
}

// allSet fails for every field of v (recursing into embedded structs)
// left at its zero value.
func allSet(t *testing.T, name string, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue // set by Bind, not by the file
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			allSet(t, name+"."+f.Name, v.Field(i))
			continue
		}
		if v.Field(i).IsZero() {
			t.Errorf("%s.%s is not set by testdata/full.yaml", name, f.Name)
		}
	}
}

// mergeSet copies into dst every field that is set in src.
func mergeSet(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		switch f := src.Field(i); {
		case f.Kind() == reflect.Struct:
			mergeSet(dst.Field(i), f)
		case !f.IsZero():
			dst.Field(i).Set(f)
		}
	}
}

func TestParseTaskResolvesReplayAndCassette(t *testing.T) {
	cases := []struct {
		file, replay, cassette string
		wantReplay, wantCass   string
	}{
		{"tasks/shop/x.yaml", "shop.har", "calls/shop.jsonl", "tasks/shop/shop.har", "tasks/shop/calls/shop.jsonl"},
		{"tasks/x.yaml", "../pages/shop.har", "/abs/c.jsonl", "pages/shop.har", "/abs/c.jsonl"},
		{"/srv/tasks/x.yaml", "/abs/shop.har", "c.jsonl", "/abs/shop.har", "/srv/tasks/c.jsonl"},
		{"x.yaml", "shop.har", "", "shop.har", ""},
	}
	for _, c := range cases {
		src := "name: n\nstart_url: https://example.com/\ngoal: g\nreplay: " + c.replay + "\n"
		if c.cassette != "" {
			src += "cassette: " + c.cassette + "\n"
		}
		task, err := ParseTask(c.file, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if task.Replay != c.wantReplay || task.Cassette != c.wantCass || task.File != c.file {
			t.Errorf("%s: replay %q cassette %q file %q, want %q %q %q", c.file, task.Replay, task.Cassette, task.File, c.wantReplay, c.wantCass, c.file)
		}
	}
}

func TestParseTaskErrorsNameFileLineAndField(t *testing.T) {
	const head = "name: n\nstart_url: https://example.com/\ngoal: g\n" // lines 1-3
	cases := []struct {
		name, src, want string
	}{
		{"unknown top-level field", head + "bogus: 1\n", "t.yaml:4: bogus: unknown field: use name, start_url"},
		{"unknown field in a step", head + "steps:\n  - click: a\n  - click: b\n    txet: c\n", "t.yaml:7: steps[1].txet: unknown field: use click, type"},
		{"unknown field in success", head + "success:\n  txt: a\n", "t.yaml:5: success.txt: unknown field: use text, url, download"},
		{"unknown field in a flow step", head + "steps: [{click: a, txet: b}]\n", "t.yaml:4: steps[0].txet: unknown field"},
		{"wrong type", head + "max_steps: lots\n", "t.yaml:4: max_steps: cannot unmarshal"},
		{"wrong type in a step", head + "steps:\n  - type: a\n    submit: maybe\n", "t.yaml:6: steps[0].submit: cannot unmarshal"},
		{"duplicate key", head + "goal: h\n", `t.yaml:4: mapping key "goal" already defined`},
		{"missing name", "start_url: https://example.com/\ngoal: g\n", "t.yaml: name: a task needs a name"},
		{"blank name", "name: '  '\nstart_url: https://example.com/\ngoal: g\n", "t.yaml:1: name: a task needs a name"},
		{"name on two lines", "name: \"a\\nb\"\nstart_url: https://example.com/\ngoal: g\n", "t.yaml:1: name: a name is one line"},
		{"missing start_url", "name: n\ngoal: g\n", "t.yaml: start_url: a task needs a start_url"},
		{"ftp start_url", "name: n\nstart_url: ftp://example.com/\ngoal: g\n", `t.yaml:2: start_url: scheme "ftp"`},
		{"relative start_url", "name: n\nstart_url: /shop/\ngoal: g\n", "t.yaml:2: start_url: not absolute"},
		{"start_url with no host", "name: n\nstart_url: 'https:///shop'\ngoal: g\n", "t.yaml:2: start_url: no host"},
		{"start_url not a URL", "name: n\nstart_url: 'http://[::1'\ngoal: g\n", "t.yaml:2: start_url: not a URL"},
		{"start_url with a password", "name: n\nstart_url: https://u:secret@example.com/\ngoal: g\n", "t.yaml:2: start_url: a user name or password"},
		{"start_url host a number", "name: n\nstart_url: http://2130706433:8080/\ngoal: g\n", `t.yaml:2: start_url: its host "2130706433" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
		{"start_url host in hex", "name: n\nstart_url: http://0x7f.1/shop\ngoal: g\n", `t.yaml:2: start_url: its host "0x7f.1" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
		{"start_url host in octal", "name: n\nstart_url: http://0177.0.0.1/\ngoal: g\n", `t.yaml:2: start_url: its host "0177.0.0.1" is read by a browser as the IP address 127.0.0.1`},
		{"start_url host cut short", "name: n\nstart_url: http://127.1/\ngoal: g\nallowed_domains: [127.0.0.1]\n", `t.yaml:2: start_url: its host "127.1" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
		{"start_url host ends in a number", "name: n\nstart_url: https://shop.1/\ngoal: g\n", `t.yaml:2: start_url: its host "shop.1" ends in a number, so a browser reads it as an IPv4 address, and it is none`},
		{"start_url host no allowed domain", "name: n\nstart_url: http://my_host:8080/\ngoal: g\n", `t.yaml:2: start_url: its host is the task's allowed domain, as the task names no allowed_domains, and "my_host" is not a host name`},
		{"missing goal", "name: n\nstart_url: https://example.com/\n", "t.yaml: goal: a task needs a goal"},
		{"blank goal", "name: n\nstart_url: https://example.com/\ngoal: \"\"\n", "t.yaml:3: goal: a task needs a goal"},
		{"bad domain", head + "allowed_domains: [example.com, 'http://x.org/']\n", `t.yaml:4: allowed_domains[1]: "http://x.org/" is not a host name`},
		{"domain an address as a number", head + "allowed_domains: [example.com, 0x7f.1]\n", `t.yaml:4: allowed_domains[1]: "0x7f.1" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
		{"negative max_steps", head + "max_steps: -1\n", "t.yaml:4: max_steps: -1 is negative"},
		{"too many max_steps", head + "max_steps: 1001\n", "t.yaml:4: max_steps: 1001 is over the limit of 1000"},
		{"negative token_budget", head + "token_budget: -5\n", "t.yaml:4: token_budget: -5 is a negative budget"},
		{"deadline not a duration", head + "deadline: soon\n", `t.yaml:4: deadline: "soon" is not a duration`},
		{"deadline with no unit", head + "deadline: 90\n", "t.yaml:4: deadline: 90 has no unit"},
		{"deadline a list", head + "deadline: [1s]\n", "t.yaml:4: deadline"},
		{"negative deadline", head + "deadline: -1s\n", "t.yaml:4: deadline: -1s is negative"},
		{"bad priority", head + "priority: urgent\n", `t.yaml:4: priority: "urgent" is not a priority`},
		{"bad file name", head + "files: {\"a b\": x.pdf}\n", `t.yaml:4: files.a b: "a b" is not a file name for a task`},
		{"file with no path", head + "files: {cv: \"\"}\n", `t.yaml:4: files.cv: a file needs its path`},
		{"upload of an undeclared file", head + "files: {cv: cv.pdf}\nsteps:\n  - upload: \"#f\"\n    file: passwd\n", `t.yaml:7: steps[0].file: <file:passwd> names no file: declare it under files:`},
		{"upload with no file", head + "steps:\n  - upload: \"#f\"\n", `t.yaml:5: steps[0].upload: upload needs a file`},
		{"bad dialogs", head + "dialogs: ignore\n", `t.yaml:4: dialogs: "ignore" is not a way to answer dialogs: write "accept" (the default) or "dismiss"`},
		{"empty success", head + "success: {}\n", "t.yaml:4: success: success needs text, url, download or more of them"},
		{"folder in success.download", head + "success: {download: out/x.csv}\n", `t.yaml:4: success.download: "out/x.csv" is not a file name pattern`},
		{"bad success.download", head + "success: {download: \"[x\"}\n", `t.yaml:4: success.download: "[x" is not a file name pattern`},
		{"bad success regexp", head + "success:\n  url: \"item/(\"\n", "t.yaml:5: success.url: not a regular expression"},
		{"agent step with click", head + "steps:\n  - agent: open it\n    click: a\n", "t.yaml:5: steps[0]: an agent step holds agent alone: put click in a step"},
		{"agent step with expect", head + "steps:\n  - click: a\n  - agent: open it\n    expect: b\n", "t.yaml:6: steps[1]: an agent step holds agent alone: put expect"},
		{"empty agent", head + "steps:\n  - agent: \"\"\n", "t.yaml:5: steps[0].agent: a sub-goal cannot be empty"},
		{"null agent", head + "steps:\n  - click: a\n  - agent:\n", "t.yaml:6: steps[1].agent: a sub-goal cannot be empty"},
		{"blank agent", head + "steps:\n  - agent: '   '\n", "t.yaml:5: steps[0].agent: a sub-goal cannot be empty"},
		{"two actions in one step", head + "steps:\n  - agent: a\n  - click: a\n    navigate: /b\n", "t.yaml:6: steps[1]: one action per step, this one has click and navigate"},
		{"empty step", head + "steps:\n  - agent: a\n  - {}\n", "t.yaml:6: steps[1]: a step needs one action"},
		{"select with no option", head + "steps:\n  - agent: a\n  - select: '#s'\n", "t.yaml:6: steps[1].select: select needs an option"},
		{"text without type", head + "steps:\n  - click: a\n    text: b\n", "t.yaml:6: steps[0].text: text and submit belong to a type step"},
		{"bad wait", head + "steps:\n  - wait: forever\n", `t.yaml:5: steps[0].wait: "forever" is not load`},
		{"bad key", head + "steps:\n  - agent: a\n  - click: x\n  - press: Hyper\n", `t.yaml:7: steps[2].press: unknown key "Hyper"`},
		{"long press cut short", head + "steps:\n  - press: " + strings.Repeat("k", 5000) + "\n", `t.yaml:5: steps[0].press: unknown key "` + strings.Repeat("k", 32) + `…"`},
		{"first problem first", head + "steps:\n  - wait: x\n  - agent: ''\n", `t.yaml:5: steps[0].wait: "x"`},
		{"empty step after an agent step", head + "steps:\n  - agent: a\n  - {}\n  - agent: ''\n", "t.yaml:6: steps[1]: a step needs one action"},
		{"not a mapping", "- name: n\n", "t.yaml:1: "},
		{"syntax error", head + "steps: [\n", "t.yaml:4: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task, err := ParseTask("t.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("ParseTask accepted it: %+v", task)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("ParseTask =\n%v\nwant the prefix\n%s", err, c.want)
			}
			if strings.Contains(err.Error(), ":secret@") {
				t.Errorf("the error repeats a password: %v", err)
			}
		})
	}
}

func TestParseTaskAcceptsDefaults(t *testing.T) {
	task, err := LoadTask(filepath.Join("testdata", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if task.MaxSteps != 0 || task.TokenBudget != 0 || task.Deadline != 0 || task.Priority != "" || task.Success != nil || task.Steps != nil {
		t.Errorf("a minimal task has more than it says: %+v", task)
	}
	for _, src := range []string{
		"name: n\nstart_url: HTTPS://Example.com\ngoal: g\ndeadline: 0\npriority: interactive\nsuccess: {url: done}\nsteps:\n  - agent: a\n  - expect: b\n",
		"name: n\nstart_url: http://127.0.0.1:8080/\ngoal: g\n",
		"name: n\nstart_url: 'http://[::1]:8080/'\ngoal: g\n",
		// A host the browser reads, though no allowed domain can name it.
		"name: n\nstart_url: http://my_host:8080/\ngoal: g\nallowed_domains: [my-host.example]\n",
	} {
		if _, err := ParseTask("t.yaml", []byte(src)); err != nil {
			t.Errorf("ParseTask(%q): %v", src, err)
		}
	}
}

func TestLoadTaskRefusesWhatIsNotATaskFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxTaskFile+1); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{dir, "not a regular file"},
		{fifo, "not a regular file"},
		{big, "at most"},
		{filepath.Join(dir, "missing.yaml"), "no such file"},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := LoadTask(c.path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("LoadTask(%s) = %v, want an error naming the file: %s", c.path, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadTask(%s) did not return", c.path)
		}
	}
}

func TestParseTaskRefusesDeepNesting(t *testing.T) {
	var indented strings.Builder
	for i := 0; i < 300; i++ {
		indented.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	cases := map[string]string{
		"100k brackets":       strings.Repeat("[", 100000),
		"200 KB of mappings":  "name: " + strings.Repeat("{a: ", 50000),
		"200 KB of lists":     "steps:\n  - " + strings.Repeat("[a, ", 50000),
		"quoted closers":      strings.Repeat(`[ a 'b, ']' `, 20000),
		"100k dashes":         strings.Repeat("- ", 100000),
		"300 indented levels": indented.String(),
	}
	for name, src := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := ParseTask("t.yaml", []byte(src))
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:") || !strings.Contains(err.Error(), "nested more than 100 levels") {
				t.Errorf("%s: ParseTask = %v, want a nesting error", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ParseTask did not return", name)
		}
	}
	// Nesting up to the bound is still read as YAML.
	src := "name: n\nstart_url: https://example.com/\ngoal: g\nsteps: " + strings.Repeat("[", 99) + strings.Repeat("]", 99) + "\n"
	if _, err := ParseTask("t.yaml", []byte(src)); err == nil || strings.Contains(err.Error(), "nested") {
		t.Errorf("99 levels: %v, want a decoding error", err)
	}
}

func TestDurationDecodesFromYAMLAndJSON(t *testing.T) {
	var v struct {
		D Duration `yaml:"d" json:"d"`
	}
	for src, want := range map[string]time.Duration{
		"d: 90s":      90 * time.Second,
		"d: 2m":       2 * time.Minute,
		"d: 1h30m":    90 * time.Minute,
		"d: '500ms'":  500 * time.Millisecond,
		"d: !!str 3s": 3 * time.Second,
		"d: 0":        0,
	} {
		v.D = 1
		if err := yaml.Unmarshal([]byte(src), &v); err != nil || time.Duration(v.D) != want {
			t.Errorf("yaml %q = %v, %v; want %v", src, v.D, err, want)
		}
	}
	for _, src := range []string{"d: soon", "d: 90", "d: {a: 1}"} {
		if err := yaml.Unmarshal([]byte(src), &v); err == nil {
			t.Errorf("yaml %q accepted as %v", src, v.D)
		}
	}
	if err := json.Unmarshal([]byte(`{"d":"2m"}`), &v); err != nil || time.Duration(v.D) != 2*time.Minute {
		t.Errorf("json 2m = %v, %v", v.D, err)
	}
	if err := json.Unmarshal([]byte(`{"d":"soon"}`), &v); err == nil {
		t.Errorf("json soon accepted as %v", v.D)
	}
	v.D = Duration(90 * time.Second)
	js, err := json.Marshal(v)
	if err != nil || string(js) != `{"d":"1m30s"}` {
		t.Errorf("json.Marshal = %s, %v", js, err)
	}
	if s := Duration(1500 * time.Millisecond).String(); s != "1.5s" {
		t.Errorf("String = %q", s)
	}
}

func FuzzParseTask(f *testing.F) {
	for _, name := range []string{"full.yaml", "minimal.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"name: n\nstart_url: https://example.com/\ngoal: g\nbogus: 1\n",
		"name: n\nstart_url: https://example.com/\ngoal: g\nsteps:\n  - agent: a\n    click: b\n  - {}\n",
		"name: n\nstart_url: https://example.com/\ngoal: g\ndeadline: &d 5s\nsuccess: {url: '('}\n",
		"name: n\nstart_url: https://example.com/\ngoal: g\nsteps: [&s {click: a}, *s, {wait: 1h}]\n",
		"name: ' '\nstart_url: ftp://x\n",
		"[[[[{a: [",
		"- - - -",
		"steps: !00000 00\n",
		"name: n\nstart_url: http://2130706433:8080/\ngoal: g\n",
		"name: n\nstart_url: http://0x7f.1/\ngoal: g\nallowed_domains: [127.1]\n",
		"name: n\nstart_url: http://my_host/\ngoal: g\n",
		"name: n\nstart_url: https://example.com/\ngoal: Pay {{a}}.\nparams: {a: 0042, b: ~}\nsuccess: {url: \"/{{a}}$\"}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := ParseTask("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if strings.TrimSpace(task.Name) == "" || strings.TrimSpace(task.Goal) == "" {
			t.Fatalf("accepted with no name or goal: %+v", task)
		}
		if err := checkStartURL(task.StartURL); err != nil {
			t.Fatalf("accepted start_url %q: %v", task.StartURL, err)
		}
		// What the task allows, the browser takes as allowed domains.
		for _, d := range task.Allowed() {
			if err := browser.CheckDomain(d); err != nil {
				t.Fatalf("accepted a task allowing %q: %v", d, err)
			}
		}
		// Bound with its defaults, or refused as bad usage; binding the
		// bound task binds the template again, to the same task.
		b, err := task.Bind(nil)
		if err != nil {
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("Bind: %v is not bad usage", err)
			}
			return
		}
		again, err := b.Bind(nil)
		if err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("bound again: %v\n%+v\nwant\n%+v", err, again, b)
		}
	})
}

func TestParseTaskConfinesScreenshots(t *testing.T) {
	src := "name: n\nstart_url: https://example.com/\ngoal: g\nsteps:\n  - click: a\n  - screenshot: ../x.png\n"
	_, err := ParseTask("t.yaml", []byte(src))
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:6: steps[1].screenshot: ") {
		t.Errorf("ParseTask = %v", err)
	}
}
