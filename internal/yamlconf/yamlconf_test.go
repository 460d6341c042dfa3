package yamlconf

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

type item struct {
	Name string `yaml:"name"`
	TPM  int    `yaml:"tpm"`
}
type conf struct {
	Items []item `yaml:"items"`
}

func TestDecodeErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		src, want string
		line      int
	}{
		{"items:\n  - name: a\n    bogus: 1\n", `unknown field "bogus"`, 3},
		{"items:\n  - name: a\n    tpm: lots\n", "cannot unmarshal", 3},
		{"items: [\n", "not found", 1},
		{"items:\n  - name: a\n    name: b\n", "already defined", 3},
	}
	for _, c := range cases {
		var v conf
		_, err := Decode("x.yaml", []byte(c.src), &v)
		var e *Error
		if !errors.As(err, &e) || e.Line != c.line || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.yaml:") {
			t.Errorf("Decode(%q) = %v, want x.yaml:%d … %s", c.src, err, c.line, c.want)
		}
	}
}

func TestErrorfPointsAtFieldOrParent(t *testing.T) {
	src := "items:\n  - name: a\n    tpm: 1\n  - name: b\n"
	var v conf
	d, err := Decode("x.yaml", []byte(src), &v)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Line("items[0].tpm"); got != 3 {
		t.Errorf("line of items[0].tpm = %d, want 3", got)
	}
	// items[1] has no tpm: point at the item itself.
	err = d.Errorf("items[1].tpm", "must be above zero")
	if got := err.Error(); got != "x.yaml:4: items[1].tpm: must be above zero" {
		t.Errorf("Errorf = %q", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(strings.Repeat("[", 1000)))
	f.Add([]byte("items:\n" + strings.Repeat("  ", 50) + "- a\n"))
	f.Add([]byte("\xef\xbb\xbfitems: []\n---\nitems: []\n"))
	f.Add([]byte(strings.Repeat("k", 300) + ": 1\n"))
	f.Add([]byte("items:\n  - name: a\n    tpm: 1\n"))
	f.Add([]byte("items: [\n"))
	f.Add([]byte("{items: [{name: x, tpm: -1}]}"))
	f.Add([]byte("base: &b {tpm: 1}\nitems:\n  - <<: *b\n    name: a\n"))
	f.Add([]byte("items:\n  - &l0 [a,a,a,a,a,a,a,a,a]\n  - &l1 [*l0,*l0,*l0,*l0,*l0,*l0,*l0,*l0,*l0]\n  - [*l1,*l1,*l1,*l1,*l1,*l1,*l1,*l1,*l1]\n"))
	f.Add([]byte("items: [*nowhere]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v conf
		d, err := Decode("f.yaml", data, &v)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		_ = d.Line("items[0].tpm")
	})
}

func TestDecodeSurvivesLibraryPanics(t *testing.T) {
	var v conf
	_, err := Decode("x.yaml", []byte("items: !00000 00\n"), &v)
	if err == nil || !strings.HasPrefix(err.Error(), "x.yaml") {
		t.Fatalf("a tag on a sequence: %v", err)
	}
}

func TestDecodeBoundsAndReports(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"two documents", "items: []\n---\nitems: []\n", "x.yaml:2: a second YAML document"},
		{"type error names the field", "items:\n  - name: a\n    tpm: \"lots\"\n", "x.yaml:3: items[0].tpm: "},
		{"first unknown field in the file", "zz: 1\nitems:\n  - name: a\n    qq: 1\n", `x.yaml:1: unknown field "zz"`},
		{"nesting", strings.Repeat("[", 100000), "nested more than 100 levels"},
	}
	for _, c := range cases {
		for range 3 { // the same answer every time
			var v conf
			_, err := Decode("x.yaml", []byte(c.src), &v)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: %v, want %s", c.name, err, c.want)
			}
		}
	}
	var v conf
	if _, err := Decode("x.yaml", []byte("\xef\xbb\xbfitems:\n  - name: a\n"), &v); err != nil || len(v.Items) != 1 {
		t.Errorf("a BOM: %v %+v", err, v)
	}
	long := strings.Repeat("k", 2<<20)
	_, err := Decode("x.yaml", []byte(long+": 1\n"), &v)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("a 2 MB key is echoed: %d bytes of error", len(err.Error()))
	}
	var e *Error
	if !errors.As(err, &e) || e.Unknown != long || len(e.Accepts) != 1 {
		t.Errorf("unknown key: %+v", e)
	}
}

func TestReadFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := dir + "/fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(p, 1<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile hangs", p)
		}
	}
	big := dir + "/big.yaml"
	if err := os.WriteFile(big, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big, 99); err == nil {
		t.Error("a file over the limit was read")
	}
}
