package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// diffAt is where two texts first differ and what is around it: the
// text they share just before, and each side's text from there on.
// Every cut falls between characters, never inside one.
type diffAt struct {
	Offset    int    // byte offset of the first character that differs; -1 when the texts are equal
	Before    string // up to n characters the texts share just before Offset
	A, B      string // up to n characters of each text from Offset
	CutBefore bool   // more text precedes Before
	CutA      bool   // more of a follows A
	CutB      bool   // more of b follows B
}

// firstDiff finds where a and b first differ, with n characters of
// context: before the difference (shared) and after it (from each).
func firstDiff(a, b string, n int) diffAt {
	off := 0
	for off < len(a) && off < len(b) && a[off] == b[off] {
		off++
	}
	if off == len(a) && off == len(b) {
		return diffAt{Offset: -1}
	}
	// Back to the start of the character the first differing byte is in:
	// the bytes before it are the same on both sides.
	for off > 0 {
		var c byte
		if off < len(a) {
			c = a[off]
		} else {
			c = b[off]
		}
		if utf8.RuneStart(c) {
			break
		}
		off--
	}
	start := off
	for i := 0; i < n && start > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(a[:start])
		start -= size
	}
	endA, endB := forward(a, off, n), forward(b, off, n)
	return diffAt{
		Offset: off, Before: a[start:off], A: a[off:endA], B: b[off:endB],
		CutBefore: start > 0, CutA: endA < len(a), CutB: endB < len(b),
	}
}

// forward is the offset n characters on from off in s, or its end.
func forward(s string, off, n int) int {
	for i := 0; i < n && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

// lines shows the two sides one above the other, labelled, with a
// caret under the first difference. quoted texts are strings: they are
// shown escaped as in JSON (so a newline stays on its line), between
// quotes where they end; raw texts (JSON values) as they are. "…" marks
// a cut either way.
func (d diffAt) lines(quoted bool, indent, labelA, labelB string) string {
	show := func(s string) string {
		if quoted {
			return escape(s)
		}
		return s
	}
	end := func(cut bool) string {
		switch {
		case cut:
			return "…"
		case quoted:
			return `"`
		}
		return ""
	}
	w := max(uniseg.StringWidth(labelA), uniseg.StringWidth(labelB)) + 1
	pad := func(l string) string { return l + strings.Repeat(" ", w-uniseg.StringWidth(l)) }
	lead := end(d.CutBefore) + show(d.Before)
	var s strings.Builder
	fmt.Fprintf(&s, "%s%s%s%s%s\n", indent, pad(labelA), lead, show(d.A), end(d.CutA))
	fmt.Fprintf(&s, "%s%s%s%s%s\n", indent, pad(labelB), lead, show(d.B), end(d.CutB))
	fmt.Fprintf(&s, "%s%s^", indent, strings.Repeat(" ", w+uniseg.StringWidth(lead)))
	return s.String()
}

// escape writes s as the inside of a JSON string: quotes, backslashes
// and control characters escaped, everything else as it is.
func escape(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}
