package calltypes

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Page is what a call reads of the page it acts on: where it is, and its
// lines in document order, each a heading, a run of the page's words, or
// one interactive element, so that a button stands after the product it
// adds and a text box after its label. A note line says what the view
// left out there and how to reach it. Render writes it, ParsePage reads it
// back; the format is the page's part of every built-in prompt:
//
//	url: https://shop.example/catalogue/
//	title: All furniture
//	[0] link "Oak and Iron home"
//	[1] searchbox "Search" placeholder="Search 1,200 pieces"
//	# All furniture
//	[2] checkbox "Walnut" checked
//	[3] combobox "Sort" value="Featured" options="Featured","Newest"
//	### [4] link "Walnut dresser"
//	(301) 330 EUR
//	[5] button "Add to cart"
//	… out of view
//	[6] textbox "Email" type=email
//	… 41 more elements and 230 words below: scroll down
//
// An element line is its index, role and name (in quotes), then only the
// attributes that say something: type (an input's, where the role does not
// say it), value, placeholder, options, href, and the flags checked,
// disabled and hidden (no box to see). "… out of view" and "… in view"
// mark where the lines leave and re-enter the viewport. "+ " before a
// line marks it new since the last action (the changes view). The page's
// words are data: nothing invisible is written, and a line of them that
// would read as one of these, or as a message's section ("goal: …") or
// list item ("- …"), starts with "\" (see words.go).
type Page struct {
	URL   string
	Title string
	Lines []Line
	// Viewport is the top and bottom of the visible part of the page, in
	// the same units as the lines' Top and Bottom; not written.
	Viewport [2]float64
}

// Line is one line of a page.
type Line struct {
	// Element is the interactive element the line is; nil for words.
	Element *Element
	// Text is the line's words when it is not an element: the page's
	// text, a heading, or a note.
	Text string
	// Heading is 1 to 6 on a heading's line (an element's too, as a
	// product's linked title), 0 elsewhere.
	Heading int
	// Note marks a line the view wrote: what was left out there.
	Note bool
	// Changed marks a line new since the last action.
	Changed bool
	// Offscreen is a line outside the viewport.
	Offscreen bool

	// Where the line stands and what it belongs to, for cutting the page
	// to a cap; none of it is written. Top and Bottom are its extent on
	// the page; List and Item number the list of like items (a product
	// grid, a table's rows) and the item in it the line is part of, 0 for
	// none; Repeat marks a link that repeats one earlier on the page (a
	// footer's copy of the navigation).
	Top, Bottom float64
	List, Item  int
	Repeat      bool
}

// Element is one interactive element, by the index the browser gave it.
type Element struct {
	Index       int      `json:"index"`
	Role        string   `json:"role,omitempty"`
	Name        string   `json:"name,omitempty"`
	Type        string   `json:"type,omitempty"` // an input's type where the role does not say it: email, password, …
	Value       string   `json:"value,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Options     []string `json:"options,omitempty"` // a drop-down's choices, for select
	MoreOptions int      `json:"more_options,omitempty"`
	Href        string   `json:"href,omitempty"` // only where it says more than the name
	Checked     bool     `json:"checked,omitempty"`
	Disabled    bool     `json:"disabled,omitempty"`
	Hidden      bool     `json:"hidden,omitempty"` // no box a person can see
}

// Notes the view writes where the page goes out of the viewport and
// comes back into it.
const (
	noteOutOfView = "out of view"
	noteInView    = "in view"
)

// Elements returns the page's elements in document order.
func (p Page) Elements() []Element {
	var out []Element
	for _, l := range p.Lines {
		if l.Element != nil {
			out = append(out, *l.Element)
		}
	}
	return out
}

// Element returns the element with the index i.
func (p Page) Element(i int) (Element, bool) {
	for _, l := range p.Lines {
		if l.Element != nil && l.Element.Index == i {
			return *l.Element, true
		}
	}
	return Element{}, false
}

// Words returns the page's words, headings and elements' names among
// them, a line each, without the view's notes.
func (p Page) Words() string {
	var b strings.Builder
	for _, l := range p.Lines {
		var s string
		switch {
		case l.Note:
			continue
		case l.Element != nil:
			s = l.Element.Words()
		default:
			s = l.Text
		}
		if s != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// Words is what a person reads of the element: its name, and the value
// it holds.
func (e Element) Words() string {
	s := e.Name
	if e.Value != "" && e.Value != e.Name {
		if s != "" {
			s += ": "
		}
		s += e.Value
	}
	if e.Checked {
		s += " (checked)"
	}
	return s
}

// String is Render.
func (p Page) String() string { return p.Render() }

// Render writes the page in its one written form; see Page.
func (p Page) Render() string {
	var b strings.Builder
	b.WriteString("url: " + shown(p.URL) + "\ntitle: " + shown(p.Title))
	offscreen := false
	for _, l := range p.Lines {
		if l.Element == nil && shown(l.Text) == "" {
			continue // words that show nothing
		}
		if l.Offscreen != offscreen && !l.Note {
			offscreen = l.Offscreen
			b.WriteString("\n… " + map[bool]string{true: noteOutOfView, false: noteInView}[offscreen])
		}
		b.WriteByte('\n')
		b.WriteString(l.String())
	}
	return b.String()
}

// String writes the line as Render does.
func (l Line) String() string {
	var b strings.Builder
	if l.Changed {
		b.WriteString("+ ")
	}
	switch {
	case l.Note:
		b.WriteString("… " + shown(l.Text))
		return b.String()
	case l.Heading > 0:
		b.WriteString(strings.Repeat("#", min(l.Heading, 6)) + " ")
	}
	if l.Element != nil {
		b.WriteString(l.Element.String())
		return b.String()
	}
	text := shown(l.Text)
	if readsAsMarkup(text) {
		b.WriteByte('\\')
	}
	b.WriteString(text)
	return b.String()
}

// headingLevel is the number of "#" a line starts with, before a space.
func headingLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || len(s) <= n || s[n] != ' ' {
		return 0
	}
	return n
}

// String writes the element as its line has it.
func (e Element) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%d] %s", e.Index, oneWord(e.Role))
	if n := shown(e.Name); n != "" {
		b.WriteString(" " + quote(n))
	}
	if t := oneWord(e.Type); e.Type != "" && t != "element" {
		b.WriteString(" type=" + t)
	}
	if v := shown(e.Value); v != "" {
		b.WriteString(" value=" + quote(v))
	}
	if p := shown(e.Placeholder); p != "" {
		b.WriteString(" placeholder=" + quote(p))
	}
	if len(e.Options) > 0 {
		q := make([]string, len(e.Options))
		for i, o := range e.Options {
			q[i] = quote(o)
		}
		b.WriteString(" options=" + strings.Join(q, ","))
		if e.MoreOptions > 0 {
			fmt.Fprintf(&b, " +%d more", e.MoreOptions)
		}
	}
	if h := shown(e.Href); h != "" {
		if strings.ContainsAny(h, ` "`) {
			h = quote(h)
		}
		b.WriteString(" href=" + h)
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{e.Checked, "checked"}, {e.Disabled, "disabled"}, {e.Hidden, "hidden"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	return b.String()
}

func quote(s string) string { return strconv.Quote(shown(s)) }

// oneWord keeps a role or type to one token of its line.
func oneWord(s string) string {
	s = strings.Join(strings.Fields(s), "-")
	s = strings.ReplaceAll(s, `"`, "")
	if s == "" {
		return "element"
	}
	return s
}

// MarshalText writes the page as Render does: a page in a call's JSON
// input is its written form.
func (p Page) MarshalText() ([]byte, error) { return []byte(p.Render()), nil }

// UnmarshalText reads a page written by Render.
func (p *Page) UnmarshalText(b []byte) error {
	v, err := ParsePage(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalJSON writes the page as a JSON string of its written form; the
// empty page as "".
func (p Page) MarshalJSON() ([]byte, error) {
	if p.URL == "" && p.Title == "" && len(p.Lines) == 0 {
		return []byte(`""`), nil
	}
	return marshalNoEscape(p.Render())
}

// UnmarshalJSON reads a page from a JSON string of its written form; an
// empty string or null is the empty page.
func (p *Page) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = Page{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("calltypes: a page is a string, its lines as headroom observe prints them: %w", err)
	}
	if s == "" {
		*p = Page{}
		return nil
	}
	return p.UnmarshalText([]byte(s))
}
