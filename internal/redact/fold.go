package redact

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// A page that echoes a secret need not echo it as typed: CSS upper-cases
// it, a server lower-cases it, a script writes one <span> per character,
// normalisation decomposes or composes it, HTML pads it and a template
// breaks it over two lines; an output then escapes it for JSON, a URL or
// HTML. Secrets are therefore found in a folded form of the text, where
// all of that is undone:
//
//   - escapes are read as what they stand for: JSON's (\n, \u00e9, \"), a
//     URL's (%41, and + for a space) and HTML's character references
//     (&amp;, &#233;, &#xE9;);
//   - whitespace, and characters that show nothing (format characters
//     such as U+200B and U+00AD, controls, variation selectors, the other
//     default-ignorable ones such as U+3164), are dropped: they are the
//     gaps a page or a view puts between a secret's characters;
//   - what is left is NFKC-normalised and case-folded (full folding, so
//     "ß" and "SS" are one), per grapheme's run of combining marks.
//
// A match in the folded text is mapped back to the bytes of the text it
// came from, and those bytes are what is replaced.

// folded is text in folded form: its bytes, and for each the span of the
// source text it came from.
type folded struct {
	b          []byte
	start, end []int32
}

// unit is one character of the source once escapes are read: the rune,
// and the source bytes that wrote it.
type unit struct {
	r          rune
	start, end int
}

var folder = cases.Fold()

// fold folds s. Characters that are gaps are dropped; the rest keep the
// span of source bytes they came from. Escapes are read as what they
// stand for.
func fold(s string) folded { return foldAs(s, true) }

// foldLiteral is fold reading every escape as the characters it is
// written with: a secret right after a literal "%" or "\" ("%0FUZZ…")
// is found where fold would read its first characters into an escape.
func foldLiteral(s string) folded { return foldAs(s, false) }

// hasEscapes reports whether fold and foldLiteral may read s apart.
func hasEscapes(s string) bool { return strings.ContainsAny(s, `\%&`) }

func foldAs(s string, escapes bool) folded {
	var f folded
	if s == "" {
		return f
	}
	f.b = make([]byte, 0, len(s))
	f.start = make([]int32, 0, len(s))
	f.end = make([]int32, 0, len(s))
	// A segment is a starter and the combining marks after it:
	// normalisation composes within it, never across.
	var seg, read [8]unit
	segment := seg[:0]
	for i := 0; i < len(s); {
		us, n := next(s, i, read[:0], escapes)
		i += n
		for _, u := range us {
			if len(segment) > 0 && boundaryBefore(u.r) {
				f.segment(segment)
				segment = segment[:0]
			}
			segment = append(segment, u)
		}
	}
	if len(segment) > 0 {
		f.segment(segment)
	}
	return f
}

// boundaryBefore reports whether normalisation never joins r to what
// comes before it.
func boundaryBefore(r rune) bool {
	if r < utf8.RuneSelf {
		return true
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	return norm.NFC.Properties(buf[:n]).BoundaryBefore()
}

// segment folds one segment's units onto f.
func (f *folded) segment(us []unit) {
	start, end := int32(us[0].start), int32(us[len(us)-1].end)
	if len(us) == 1 && us[0].r < utf8.RuneSelf {
		r := us[0].r
		if gap(r) {
			return
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		f.add(byte(r), start, end)
		return
	}
	var sb strings.Builder
	for _, u := range us {
		if !gap(u.r) {
			sb.WriteRune(u.r)
		}
	}
	if sb.Len() == 0 {
		return
	}
	out := norm.NFKC.String(folder.String(norm.NFKC.String(sb.String())))
	for _, r := range out {
		if gap(r) {
			continue
		}
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		for _, c := range buf[:n] {
			f.add(c, start, end)
		}
	}
}

func (f *folded) add(c byte, start, end int32) {
	f.b = append(f.b, c)
	f.start = append(f.start, start)
	f.end = append(f.end, end)
}

// gap reports a character that separates a secret's characters without
// being one of them: whitespace, and whatever shows nothing.
func gap(r rune) bool {
	if r < utf8.RuneSelf {
		return r <= ' ' || r == 0x7f || r == '+'
	}
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		r == utf8.RuneError || r == '\u2800'
}

// next reads the character at s[i:], reading an escape as the character
// it stands for (see fold), onto buf; a JSON escape of a control (\n, \t)
// is a space. It returns the characters and how many bytes they took.
func next(s string, i int, buf []unit, escapes bool) ([]unit, int) {
	if c := s[i]; c < utf8.RuneSelf && (!escapes || c != '\\' && c != '%' && c != '&') {
		return append(buf, unit{rune(c), i, i + 1}), 1
	}
	if us, n, ok := escape(s, i, buf); escapes && ok {
		return us, n
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return append(buf, unit{r, i, i + n}), n
}

// escape reads the escape at s[i:], if there is one: the characters it
// writes and how many bytes it takes.
func escape(s string, i int, buf []unit) ([]unit, int, bool) {
	switch s[i] {
	case '\\':
		return jsonEscape(s, i, buf)
	case '%':
		return percentEscape(s, i, buf)
	case '&':
		return htmlReference(s, i, buf)
	}
	return nil, 0, false
}

func jsonEscape(s string, i int, buf []unit) ([]unit, int, bool) {
	if i+1 >= len(s) {
		return nil, 0, false
	}
	switch c := s[i+1]; c {
	case 'n', 'r', 't', 'b', 'f':
		return append(buf, unit{' ', i, i + 2}), 2, true
	case '"', '\\', '/', '\'':
		return append(buf, unit{rune(c), i, i + 2}), 2, true
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return nil, 0, false
		}
		n := 6
		if utf16IsHigh(r) {
			if lo, ok := hex4(s, i+8); ok && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && utf16IsLow(lo) {
				r, n = (r-0xd800)<<10+(lo-0xdc00)+0x10000, 12
			}
		}
		return append(buf, unit{r, i, i + n}), n, true
	}
	return nil, 0, false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(v), err == nil
}

func utf16IsHigh(r rune) bool { return 0xd800 <= r && r < 0xdc00 }
func utf16IsLow(r rune) bool  { return 0xdc00 <= r && r < 0xe000 }

// percentEscape reads a run of %XX escapes as the UTF-8 they spell; a run
// that spells no valid UTF-8 is not read as one.
func percentEscape(s string, i int, buf []unit) ([]unit, int, bool) {
	var raw []byte
	var at []int
	j := i
	for j+2 < len(s) && s[j] == '%' && isHex(s[j+1]) && isHex(s[j+2]) {
		v, _ := strconv.ParseUint(s[j+1:j+3], 16, 8)
		raw = append(raw, byte(v))
		at = append(at, j)
		j += 3
	}
	if len(raw) == 0 || !utf8.Valid(raw) {
		return nil, 0, false
	}
	for k := 0; k < len(raw); {
		r, n := utf8.DecodeRune(raw[k:])
		buf = append(buf, unit{r, at[k], at[k+n-1] + 3})
		k += n
	}
	return buf, j - i, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// htmlEntities are the named references an output or a page escapes a
// value with.
var htmlEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": ' '}

func htmlReference(s string, i int, buf []unit) ([]unit, int, bool) {
	semi := strings.IndexByte(s[i:min(len(s), i+12)], ';')
	if semi < 2 {
		return nil, 0, false
	}
	name := s[i+1 : i+semi]
	n := semi + 1
	if r, ok := htmlEntities[name]; ok {
		return append(buf, unit{r, i, i + n}), n, true
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if h, ok := strings.CutPrefix(num, "x"); ok {
			num, base = h, 16
		} else if h, ok := strings.CutPrefix(num, "X"); ok {
			num, base = h, 16
		}
		v, err := strconv.ParseUint(num, base, 32)
		if err == nil && v <= unicode.MaxRune {
			return append(buf, unit{rune(v), i, i + n}), n, true
		}
	}
	return nil, 0, false
}

// foldValue is a value's folded form, as text is searched for it.
func foldValue(v string) string { return string(fold(v).b) }
