package browser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
)

// Snapshot is what an agent sees of a page at one moment: where it is, the
// interactive elements a person could use, by index, and the page's text.
type Snapshot struct {
	URL         string
	Title       string
	Elements    []Element
	Text        string
	Fingerprint string // URL + structure: equal fingerprints, same page state

	opts SnapshotOptions
	page *Page // the page observed, which its indexes resolve on
}

// Element is one interactive element. Index is its place in Elements;
// Snapshot.Index(i) names it for an action, while it stays on the page.
type Element struct {
	Index       int               `json:"index"`
	Role        string            `json:"role"`           // from the accessibility tree: button, link, textbox, ...
	Name        string            `json:"name,omitempty"` // accessible name
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

// SnapshotOptions size what Render writes.
type SnapshotOptions struct {
	// MaxTokens caps the rendered snapshot; 2000 when zero.
	MaxTokens int
	// Count measures tokens; a quarter of the characters when nil. Pass
	// the model's tokenizer for exact figures.
	Count func(string) int
	// MaxNameChars cuts long names and values; 80 when zero.
	MaxNameChars int
}

func (o SnapshotOptions) withDefaults() SnapshotOptions {
	if o.MaxTokens <= 0 {
		o.MaxTokens = 2000
	}
	if o.Count == nil {
		o.Count = func(s string) int { return (len(s) + 3) / 4 }
	}
	if o.MaxNameChars <= 0 {
		o.MaxNameChars = 80
	}
	return o
}

// Line is the element as the snapshot writes it, for example
//
//	[3] textbox "Email" <input type=email placeholder="you@example.com"> required
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

// String is Render with the snapshot's own options.
func (s *Snapshot) String() string {
	out, _ := s.Render()
	return out
}

// Render writes the snapshot for a model, within the token cap. When it
// does not fit, Fit cuts the text first, then the elements from the end,
// and a marker says what was left out. truncated reports whether anything was.
func (s *Snapshot) Render() (out string, truncated bool) {
	o := s.opts.withDefaults()
	head := "url: " + s.URL + "\ntitle: " + s.Title + "\n"
	lines := make([]string, len(s.Elements))
	for i, e := range s.Elements {
		lines[i] = e.Line(o.MaxNameChars)
	}
	render := func(c *Snapshot, cut Cut) string {
		return compose(head, lines[:len(c.Elements)], c.Text, cut.String())
	}
	c, cut := s.Fit(func(c *Snapshot, cut Cut) bool { return o.Count(render(c, cut)) <= o.MaxTokens })
	return render(c, cut), cut != Cut{}
}

func compose(head string, lines []string, text, marker string) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("elements:\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if text != "" {
		b.WriteString("text:\n")
		b.WriteString(text)
		b.WriteByte('\n')
	}
	if marker != "" {
		b.WriteString(marker)
		b.WriteByte('\n')
	}
	return b.String()
}
