package yamlconf

import (
	"errors"
	"strings"
	"testing"
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
	f.Add([]byte("items:\n  - name: a\n    tpm: 1\n"))
	f.Add([]byte("items: [\n"))
	f.Add([]byte("{items: [{name: x, tpm: -1}]}"))
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
