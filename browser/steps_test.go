package browser

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseSteps(t *testing.T) {
	steps, err := ParseSteps("ok.yaml", []byte(`
- navigate: /search
- type: "#q"
  text: walnut
  submit: true
- wait: network
- wait: 250ms
- select: "#sort"
  option: Price
- click: "//a[1]"
- expect: In stock
- scroll: down
- press: Enter
- back: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 10 || !steps[1].Submit || steps[4].Option != "Price" {
		t.Fatalf("steps = %+v", steps)
	}
	if _, ok := Selector(steps[5].Click).(XPath); !ok {
		t.Error("a selector starting with / should be XPath")
	}
	if _, ok := Selector(steps[1].Type).(CSS); !ok {
		t.Error("#q should be CSS")
	}
	if got := steps[1].String(); got != `type "walnut" into #q and submit` {
		t.Errorf("String = %q", got)
	}
}

func TestParseStepsErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"- click: a\n- {}\n", "bad.yaml:2: [1]: a step needs one action"},
		{"- click: a\n  type: b\n", "bad.yaml:1: [0]: one action per step, this one has click and type"},
		{"- click: a\n- select: '#s'\n", "bad.yaml:2: [1].select: select needs an option"},
		{"- navigate: /\n- wait: forever\n", `bad.yaml:2: [1].wait: "forever" is not load, network, dom`},
		{"- press: Hyper\n", `bad.yaml:1: [0].press: unknown key "Hyper"`},
		{"- clik: a\n", "bad.yaml:1"},
		{"- click: [a\n", "bad.yaml"},
		{"click: a\n", "bad.yaml"},
		{"- click: a\n  text: hello\n", "bad.yaml:2: [0].text: text and submit belong to a type step"},
	} {
		_, err := ParseSteps("bad.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSteps(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseSteps(f *testing.F) {
	f.Add([]byte("- click: '#a'\n- type: b\n  text: c\n  submit: true\n"))
	f.Add([]byte("- wait: 1s\n- select: s\n  option: o\n"))
	f.Add([]byte("- !!map {}\n"))
	f.Add([]byte(strings.Repeat("[", 1000)))
	f.Add([]byte("- screenshot: ../x.png\n"))
	f.Add([]byte("\xef\xbb\xbf- back: true\n---\n- back: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		steps, err := ParseSteps("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, s := range steps {
			if n := len(s.actions()); n > 1 || (n == 0 && s.Expect == "") {
				t.Fatalf("accepted a step with %d actions: %+v", n, s)
			}
			_ = s.String()
		}
	})
}

func TestStepsConfineScreenshots(t *testing.T) {
	for _, name := range []string{"../x.png", "a/b.png", "/tmp/x.png", ".."} {
		_, err := ParseSteps("s.yaml", []byte("- click: a\n- screenshot: \""+name+"\"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:2: [1].screenshot: ") {
			t.Errorf("%q: %v", name, err)
		}
		if a := (Step{Screenshot: name}).Action("shots"); a.Kind != KindScreenshot || a.File != "" {
			t.Errorf("%q: Action writes %q", name, a.File)
		}
	}
	if a := (Step{Screenshot: "ok.png"}).Action("shots"); a.File != filepath.Join("shots", "ok.png") {
		t.Errorf("ok.png: %q", a.File)
	}
}

func TestLoadStepsRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := LoadSteps(p); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: read", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: LoadSteps hangs", p)
		}
	}
	start := time.Now()
	if _, err := ParseSteps("s.yaml", []byte(strings.Repeat("[", 100000))); err == nil || !strings.Contains(err.Error(), "nested") || time.Since(start) > 5*time.Second {
		t.Errorf("100k [: %v after %v", err, time.Since(start))
	}
}
