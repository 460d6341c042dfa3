package browser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Snapshot is what an agent sees of a page at one moment: where it is, the
// interactive elements a person could use, by index, and the page as it
// reads, in blocks: its headings and runs of words with the elements
// among them, in document order, each where it stands on the page.
type Snapshot struct {
	URL         string
	Title       string
	Elements    []Element
	Blocks      []Block
	Text        string     // all the page's rendered text, elements' included
	Viewport    [2]float64 // the top and bottom of the visible part, in CSS pixels from the top of the page
	Fingerprint string     // URL + structure: equal fingerprints, same page state

	opts SnapshotOptions
	page *Page // the page observed, which its indexes resolve on
}

// Element is one interactive element. Index is its place in Elements;
// Snapshot.Index(i) names it for an action, while it stays on the page.
type Element struct {
	Index       int               `json:"index"`
	Role        string            `json:"role"`           // from the accessibility tree: button, link, textbox, ...
	Name        string            `json:"name,omitempty"` // accessible name, else the visible label, else what its author called it
	Tag         string            `json:"tag"`            // lower-case tag name
	Type        string            `json:"type,omitempty"` // input type
	Placeholder string            `json:"placeholder,omitempty"`
	Href        string            `json:"href,omitempty"`
	Value       string            `json:"value,omitempty"`
	Options     []string          `json:"options,omitempty"` // a <select>'s option labels
	Checked     bool              `json:"checked,omitempty"`
	Disabled    bool              `json:"disabled,omitempty"`
	Visible     bool              `json:"visible"`             // has a box a person can see
	Offscreen   bool              `json:"offscreen,omitempty"` // outside the viewport: scroll to reach it
	Frame       int               `json:"frame,omitempty"`     // 0 for the top document, n for the n-th frame inside it
	BackendID   cdp.BackendNodeID `json:"backend_id"`
}

// Block is one line of the page as a person reads it: a heading or a run
// of words, or one element (Element is its index, -1 for words). A list
// of like items (a product grid, a table's rows, a menu) numbers its
// items, so that a reader can keep or fold an item whole.
type Block struct {
	Text      string  `json:"text,omitempty"`
	Heading   int     `json:"heading,omitempty"` // 1 to 6 in a heading
	Element   int     `json:"element"`
	Top       float64 `json:"top"` // CSS pixels from the top of the page
	Bottom    float64 `json:"bottom"`
	Offscreen bool    `json:"offscreen,omitempty"`
	List      int     `json:"list,omitempty"` // the list of like items it is part of, from 1; 0 for none
	Item      int     `json:"item,omitempty"` // the item of that list, from 1
}

// redact applies the rule every output keeps (a HAR file's) to what the
// snapshot hands on to prompts, logs and results: its address and links
// by redact.URL, its words by redact.Text. A token in a link's query is
// no business of the model's, and the agent acts by index, not by href.
// hide comes first: it shows the run's secrets by name (Placeholder),
// which the general rule would only mark redacted.
func (s *Snapshot) redact(hide func(string) string) {
	text := func(v string) string { return redact.Text(hide(v)) }
	link := func(v string) string { return redact.URL(hide(v)) }
	s.URL, s.Title, s.Text = link(s.URL), text(s.Title), text(s.Text)
	for i := range s.Elements {
		e := &s.Elements[i]
		e.Name, e.Placeholder, e.Value = text(e.Name), text(e.Placeholder), text(e.Value)
		e.Href = link(e.Href)
		for j, o := range e.Options {
			e.Options[j] = text(o)
		}
	}
	for i := range s.Blocks {
		s.Blocks[i].Text = text(s.Blocks[i].Text)
	}
}

// SnapshotOptions shape what Observe collects.
type SnapshotOptions struct {
	// MaxNameChars cuts long names and values; 80 when zero.
	MaxNameChars int
}

func (o SnapshotOptions) withDefaults() SnapshotOptions {
	if o.MaxNameChars <= 0 {
		o.MaxNameChars = 80
	}
	return o
}

// Line is the element as the browser lists it for people reading logs
// and tests, for example
//
//	[3] textbox "Email" <input type=email placeholder="you@example.com">
//
// What a model reads is the caller's to write (package calltypes writes
// the agent's).
func (e Element) Line(maxChars int) string {
	if maxChars <= 0 {
		maxChars = 80
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%d] %s", e.Index, e.Role)
	if e.Name != "" {
		b.WriteString(" " + strconv.Quote(clip(e.Name, maxChars)))
	}
	b.WriteString(" <" + e.Tag)
	if e.Type != "" {
		b.WriteString(" type=" + e.Type)
	}
	if e.Placeholder != "" && e.Placeholder != e.Name {
		b.WriteString(" placeholder=" + strconv.Quote(clip(e.Placeholder, maxChars)))
	}
	if e.Href != "" {
		b.WriteString(" href=" + clip(e.Href, maxChars))
	}
	if e.Value != "" {
		b.WriteString(" value=" + strconv.Quote(clip(e.Value, maxChars)))
	}
	b.WriteString(">")
	if len(e.Options) > 0 {
		opts := e.Options
		more := ""
		if len(opts) > 8 {
			more = fmt.Sprintf(" +%d more", len(opts)-8)
			opts = opts[:8]
		}
		q := make([]string, len(opts))
		for i, o := range opts {
			q[i] = strconv.Quote(clip(o, 40))
		}
		b.WriteString(" options=" + strings.Join(q, ",") + more)
	}
	if e.Checked {
		b.WriteString(" checked")
	}
	if e.Disabled {
		b.WriteString(" disabled")
	}
	if !e.Visible {
		b.WriteString(" hidden")
	} else if e.Offscreen {
		b.WriteString(" offscreen")
	}
	if e.Frame > 0 {
		fmt.Fprintf(&b, " frame=%d", e.Frame)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// String lists the snapshot for people: its url and title, then its
// blocks, an element as Line writes it.
func (s *Snapshot) String() string {
	var b strings.Builder
	b.WriteString("url: " + s.URL + "\ntitle: " + s.Title + "\n")
	for _, bl := range s.Blocks {
		if bl.Heading > 0 {
			b.WriteString(strings.Repeat("#", bl.Heading) + " ")
		}
		if bl.Element >= 0 && bl.Element < len(s.Elements) {
			b.WriteString(s.Elements[bl.Element].Line(s.opts.withDefaults().MaxNameChars))
		} else {
			b.WriteString(bl.Text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
