package calltypes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PageError is a written page that does not read: its line (from 1) and
// what is wrong there.
type PageError struct {
	Line    int
	Problem string
}

func (e *PageError) Error() string {
	return fmt.Sprintf("calltypes: page line %d: %s", e.Line, e.Problem)
}

// ParsePage reads a page written by Render: Render of what it returns is
// the text it read. Where it stands, the lines' extent and lists are not
// written, so they come back zero.
func ParsePage(s string) (Page, error) {
	lines := strings.Split(s, "\n")
	var p Page
	url, ok := strings.CutPrefix(lines[0], "url:")
	if !ok {
		return Page{}, &PageError{1, `want "url: " and the page's address first`}
	}
	p.URL = strings.TrimPrefix(url, " ")
	if len(lines) < 2 {
		return Page{}, &PageError{2, `want "title: " and the page's title after its url`}
	}
	title, ok := strings.CutPrefix(lines[1], "title:")
	if !ok {
		return Page{}, &PageError{2, `want "title: " and the page's title after its url`}
	}
	p.Title = strings.TrimPrefix(title, " ")
	offscreen := false
	for i, raw := range lines[2:] {
		l, err := parseLine(raw)
		if err != nil {
			return Page{}, &PageError{i + 3, err.Error()}
		}
		if l.Note && !l.Changed {
			switch l.Text {
			case noteOutOfView:
				offscreen = true
				continue
			case noteInView:
				offscreen = false
				continue
			}
		}
		if !l.Note {
			l.Offscreen = offscreen
		}
		p.Lines = append(p.Lines, l)
	}
	return p, nil
}

// parseLine reads one line after the page's url and title.
func parseLine(s string) (Line, error) {
	var l Line
	if rest, ok := strings.CutPrefix(s, "+ "); ok {
		l.Changed, s = true, rest
	}
	if rest, ok := strings.CutPrefix(s, "… "); ok {
		if strings.TrimSpace(rest) == "" {
			return Line{}, errors.New("a note says nothing")
		}
		l.Note, l.Text = true, shown(rest)
		return l, nil
	}
	if n := headingLevel(s); n > 0 {
		l.Heading, s = n, s[n+1:]
	}
	switch {
	case strings.HasPrefix(s, `\`):
		l.Text = s[1:]
	case startsElement(s):
		e, err := ParseElement(s)
		if err != nil {
			return Line{}, err
		}
		l.Element = &e
	case readsAsMarkup(s):
		// Render writes such words after a "\": as they stand, they are
		// not a page's.
		return Line{}, fmt.Errorf("%q reads as a line the view writes, not as the page's words: write words that begin so after a \\", clipRunes(s, 30))
	default:
		l.Text = s
	}
	if l.Element == nil && strings.TrimSpace(l.Text) == "" {
		return Line{}, errors.New("the line is empty")
	}
	return l, nil
}

// startsElement reports a line that opens with an element's [index].
func startsElement(s string) bool {
	_, _, err := scanIndex(s)
	return err == nil
}

// ParseElement reads an element written by Element.String.
func ParseElement(s string) (Element, error) {
	idx, rest, err := scanIndex(s)
	if err != nil {
		return Element{}, err
	}
	e := Element{Index: idx}
	rest, ok := strings.CutPrefix(rest, " ")
	if !ok {
		return Element{}, fmt.Errorf("[%d] wants a role after it", idx)
	}
	e.Role, rest, _ = strings.Cut(rest, " ")
	if e.Role == "" {
		return Element{}, fmt.Errorf("[%d] wants a role after it", idx)
	}
	if rest != "" {
		rest = " " + rest
	}
	if strings.HasPrefix(rest, ` "`) {
		if e.Name, rest, err = scanQuoted(rest[1:]); err != nil {
			return Element{}, fmt.Errorf("[%d]'s name: %v", idx, err)
		}
	}
	for rest != "" {
		if rest, ok = strings.CutPrefix(rest, " "); !ok {
			return Element{}, fmt.Errorf("[%d]: want a space before %q", idx, clipRunes(rest, 20))
		}
		key, after, hasValue := strings.Cut(rest, "=")
		if !hasValue || strings.Contains(key, " ") {
			key, rest, _ = strings.Cut(rest, " ")
			if rest != "" {
				rest = " " + rest
			}
			switch key {
			case "checked":
				e.Checked = true
			case "disabled":
				e.Disabled = true
			case "hidden":
				e.Hidden = true
			default:
				return Element{}, fmt.Errorf("[%d]: %q is not an attribute of an element line", idx, key)
			}
			continue
		}
		if rest, err = e.attribute(key, after); err != nil {
			return Element{}, fmt.Errorf("[%d]'s %s: %v", idx, key, err)
		}
	}
	return e, nil
}

// attribute reads key's value from the start of s and returns what
// follows it.
func (e *Element) attribute(key, s string) (string, error) {
	var err error
	switch key {
	case "type":
		e.Type, s, _ = strings.Cut(s, " ")
		if s != "" {
			s = " " + s
		}
		if e.Type == "" {
			return "", errors.New("is empty")
		}
	case "value":
		e.Value, s, err = scanQuoted(s)
	case "placeholder":
		e.Placeholder, s, err = scanQuoted(s)
	case "href":
		if strings.HasPrefix(s, `"`) {
			e.Href, s, err = scanQuoted(s)
		} else {
			e.Href, s, _ = strings.Cut(s, " ")
			if s != "" {
				s = " " + s
			}
		}
	case "options":
		for {
			var o string
			if o, s, err = scanQuoted(s); err != nil {
				return "", err
			}
			e.Options = append(e.Options, o)
			var more bool
			if s, more = strings.CutPrefix(s, ","); !more {
				break
			}
		}
		if rest, ok := strings.CutPrefix(s, " +"); ok {
			n, after, _ := strings.Cut(rest, " more")
			if e.MoreOptions, err = strconv.Atoi(n); err != nil || e.MoreOptions <= 0 {
				return "", fmt.Errorf("%q is not a count of more options", n)
			}
			s = after
		}
	default:
		return "", errors.New("is not an attribute of an element line")
	}
	return s, err
}

// MustParsePage is ParsePage for pages written in code, such as tests
// and examples; it panics on a page that does not read.
func MustParsePage(s string) Page {
	p, err := ParsePage(s)
	if err != nil {
		panic(err)
	}
	return p
}
