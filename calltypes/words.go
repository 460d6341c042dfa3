package calltypes

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The page's words are data. Every line the product writes into a prompt
// has a form no page text can take: an element ("[3] button …"), a
// heading ("# …"), a note ("… …"), a change ("+ …"), a message's section
// ("goal: …") and its list items ("- …"). Page text is written so that it
// never reads as one of them, to a parser or to a model:
//
//   - characters that show nothing (format characters such as U+200B,
//     U+FEFF and the bidirectional controls, controls, variation
//     selectors, the other default-ignorable ones such as U+3164) are
//     dropped, so that what a model reads is what a person sees, and no
//     invisible character can stand before a forged "[14] button";
//   - a line of words that, so cleaned and NFKC-folded (fullwidth "［１４］"
//     is "[14]"), would begin as one of the product's lines is written
//     after a "\", which the product's own lines never begin with.

// shown is s as a line of the view writes it: on one line, its spaces
// collapsed, with nothing in it a person would not see.
func shown(s string) string {
	if strings.IndexFunc(s, invisible) >= 0 {
		s = strings.Map(func(r rune) rune {
			if invisible(r) {
				return -1
			}
			return r
		}, s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// invisible reports a character that shows nothing where it stands. A
// space is not one: strings.Fields collapses spaces.
func invisible(r rune) bool {
	if r < utf8.RuneSelf {
		return r < ' ' && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
	}
	if unicode.IsSpace(r) {
		return false
	}
	return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// readsAsMarkup reports whether a line of words would be read as one of
// the product's lines: an element, a heading, a note, a change, an
// escape, a message's section or list item. It judges the line as a
// reader would see it: its compatibility forms folded (NFKC), and any
// marks or blanks before its first letter set aside.
func readsAsMarkup(s string) bool {
	if readsAs(s) {
		return true
	}
	f := strings.TrimLeftFunc(norm.NFKC.String(shown(s)), func(r rune) bool {
		return unicode.In(r, unicode.M, unicode.Z) || r == '\u2800' || invisible(r)
	})
	return f != s && readsAs(f)
}

// readsAs is readsAsMarkup on a line taken as it stands.
func readsAs(s string) bool {
	switch {
	case strings.HasPrefix(s, `\`), strings.HasPrefix(s, "…"), strings.HasPrefix(s, "..."),
		strings.HasPrefix(s, "+ "), strings.HasPrefix(s, "- "), s == "+", s == "-":
		return true
	case headingLevel(s) > 0, sectionLike(s):
		return true
	}
	_, _, err := scanIndex(s)
	return err == nil
}

// sectionLike reports a line that begins as a message's section does: a
// key of lower-case letters, digits and '_', then ':'.
func sectionLike(s string) bool {
	key, _, ok := strings.Cut(s, ":")
	return ok && sectionKey.MatchString(key)
}
