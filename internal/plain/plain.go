// Package plain makes text that strangers wrote (a page's title, its
// words, a server's error) safe to show on a terminal: a control
// character there could set the window's title, clear the screen or
// move the cursor over what came before. Each is shown escaped instead.
package plain

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character but tab and newline
// (C0, DEL and C1) written as a \u00XX escape, and every byte that is not
// UTF-8 as \xXX. The \u form keeps a JSON document valid, so Escape may
// be applied to JSON as well as to lines for people. Text with nothing
// to escape is returned as it is.
func Escape(s string) string {
	i := strings.IndexFunc(s, needsEscape)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func needsEscape(r rune) bool { return r == utf8.RuneError || control(r) }

// control reports a rune a terminal acts on rather than shows.
func control(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f
}
