package browser

import (
	"slices"
	"strings"
	"unicode"
)

// An element nothing readable names (an icon in a mail list, a bare
// button) is named by what its author called it: the words of its class
// and id, an icon's name (data-icon, an SVG sprite's #star), and those of
// what it holds. "icon icon--star" names a star; twenty unnamed images
// say nothing of which is which.

// maxHints bounds the words collected for one element.
const maxHints = 16

// hint gives the element being walked the words of one of its
// descendants.
func (w *walker) hint(tag string, attrs map[string]string) {
	if len(w.hints) == 0 {
		return
	}
	top := &w.hints[len(w.hints)-1]
	if len(*top) >= maxHints {
		return
	}
	*top = append(*top, authorWords(tag, attrs)...)
}

// hintWords are the words an element's author named it by, its own
// first, then its content's: at most three, distinct.
func (w *walker) hintWords(attrs map[string]string) []string {
	words := authorWords("", attrs)
	if len(w.hints) > 0 {
		words = append(words, w.hints[len(w.hints)-1]...)
	}
	var out []string
	for _, x := range words {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// authorWords are the meaningful words of a node's names for itself.
func authorWords(tag string, attrs map[string]string) []string {
	var src []string
	src = append(src, attrs["data-icon"], attrs["data-action"], attrs["data-testid"])
	if tag == "use" {
		for _, k := range []string{"href", "xlink:href"} {
			if _, frag, ok := strings.Cut(attrs[k], "#"); ok {
				src = append(src, frag)
			}
		}
	}
	src = append(src, attrs["id"], attrs["class"])
	var out []string
	for _, s := range src {
		for _, word := range splitName(s) {
			if !genericName[word] && !slices.Contains(out, word) {
				out = append(out, word)
			}
		}
	}
	return out
}

// splitName splits an identifier into lower-case words: at anything but
// a letter, and between a lower-case letter and an upper-case one
// ("icon-star", "btn--reply", "iconTrash", "fa-solid fa-envelope").
func splitName(s string) []string {
	var out []string
	var cur []rune
	end := func() {
		if len(cur) > 2 {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r):
			end()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			end()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	end()
	return out
}

// genericName are words of class names that say how a thing looks or
// which library drew it, not what it does.
var genericName = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`icon icons ico glyph glyphicon glyphicons material symbols symbol
		outlined outline round rounded sharp filled solid regular light thin duotone brands fas far fab fal
		fad svg img image btn button buttons link links action actions control controls wrapper wrap container
		inner outer item items element elem component comp block content body box main
		primary secondary tertiary default active inactive selected disabled hover focus focused visible hidden
		small large medium big tiny mini xsmall xlarge left right top bottom center middle start end
		new old flex grid row col column cell inline js has the and for with ui mdi ion bi lucide feather
		heroicons tabler remix phosphor bx bxs bxl octicon codicon clickable pointer cursor`) {
		m[w] = true
	}
	return m
}()
