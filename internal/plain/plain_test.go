package plain

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeShowsWhatATerminalWouldDo(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"plain text\tand\nlines":       "plain text\tand\nlines",
		"Grüße, 東京":                    "Grüße, 東京",
		"\x1b]0;owned\x07title":        `\u001b]0;owned\u0007title`,
		"clear\x1b[2J":                 `clear\u001b[2J`,
		"back\rover":                   `back\u000dover`,
		"del\x7f":                      `del\u007f`,
		"csi\u009b31m":                 `csi\u009b31m`,
		"bad \xff\xfe byte":            `bad \xff\xfe byte`,
		"a replacement \uFFFD is text": "a replacement \uFFFD is text",
		"cut rune \xe6\x9d":            `cut rune \xe6\x9d`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// JSON stays JSON, and means the same text, when escaped whole.
func TestEscapeKeepsJSONValid(t *testing.T) {
	in := map[string]string{"title": "x\u009b2J\u0085y\x7fz"}
	b, _ := json.Marshal(in)
	var out map[string]string
	if err := json.Unmarshal([]byte(Escape(string(b))), &out); err != nil {
		t.Fatalf("%s: %v", Escape(string(b)), err)
	}
	if out["title"] != in["title"] {
		t.Errorf("got %q, want %q", out["title"], in["title"])
	}
}

// Escape leaves nothing a terminal acts on, and keeps the text readable:
// what it returns is UTF-8, and escaping it again changes nothing.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "\x1b]0;t\x07", "a\u009bb", "\xff", "ok\ttext\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) || strings.IndexFunc(out, control) >= 0 {
			t.Fatalf("Escape(%q) = %q", s, out)
		}
		if Escape(out) != out {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
	})
}
