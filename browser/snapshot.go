package browser

import (
	"fmt"
	"slices"
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
	// Dialogs are those the page opened since the last snapshot: as an
	// action's outcome (which tells of those it opened), as it loaded,
	// or on a timer. Each was answered as it opened (Options.Dialogs).
	Dialogs []Dialog
	// Downloads are the files saved since the last snapshot, with the
	// beginning of those that are text (Download.Text).
	Downloads []Download
	// Tabs are the open tabs when there is more than one, the snapshot's
	// marked Current.
	Tabs []Tab
	// RefusedFrames are the addresses of the page's frames the fence
	// refused (outside the allowed domains): shown nowhere, read never.
	RefusedFrames []string
	// Visual is the share of the viewport, 0 to 1, that pictures cover
	// (img, svg, canvas, video, picture, object, embed, and elements
	// painted with a background image): pixels the text does not
	// describe. Overlapping pictures count twice; the sum stops at 1.
	Visual float64
	// Unnamed counts the visible elements on screen that nothing a person
	// reads names (no words, placeholder or value; at most what their
	// author called them): icon-only buttons, which only a picture shows.
	Unnamed int

	opts  SnapshotOptions
	page  *Page          // the page observed, which its indexes resolve on
	tab   *tab           // the tab observed, which Screenshot captures
	hosts map[int]string // each frame's host, by Element.Frame and Block.Frame
	// masks are where the page shows what the snapshot does not
	// (secrets, passwords, what it could not read), in page CSS pixels:
	// Screenshot paints them over.
	masks []rect
	// unlisted are the values of fields the snapshot does not list (in
	// aria-hidden content), which the page still paints.
	unlisted []shownValue
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

	// untouchable names the secrets whose values the element shows (in
	// its words or its list item's) where they may not be typed: no
	// action may touch it, or the page would learn the value by which of
	// its elements the agent chose.
	untouchable []string
	// shows is where the page shows the element's words: its box with
	// its content's, and the words it was named by beside it.
	shows []rect
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
	List      int     `json:"list,omitempty"`  // the list of like items it is part of, from 1; 0 for none
	Item      int     `json:"item,omitempty"`  // the item of that list, from 1
	Frame     int     `json:"frame,omitempty"` // as Element.Frame

	left, right float64 // its words' extent across the page; 0, 0 for a block nothing placed (a PDF's row)
}

// redactSnapshot applies the rule every output keeps (a HAR file's) to
// what the snapshot hands on to prompts, logs and results. First the
// run's secrets, shown as each frame's host shows them (Page.shown): the
// page's words of one frame are read as one text, so a value the page
// split over elements or lines is found across them, and an element that
// shows a value where it may not be typed, in its words or in its list
// item's, is marked untouchable. Then the general rule: addresses and
// links by redact.URL, words by redact.Text. A token in a link's query is
// no business of the model's, and the agent acts by index, not by href.
// Where the page shows words it changed, a picture of the page must not
// show them either: those places become the snapshot's masks.
func (p *Page) redactSnapshot(s *Snapshot) {
	was := wordsOf(s)
	defer p.maskRedacted(s, was)
	top := s.hosts[0]
	s.URL, s.Title, s.Text = redact.URL(p.hideOn(top, s.URL)), redact.Text(p.hideOn(top, s.Title)), redact.Text(p.hideOn(top, s.Text))
	p.hideWords(s)
	for i := range s.Elements {
		e := &s.Elements[i]
		host := s.hosts[e.Frame]
		text := func(v string) string { return redact.Text(p.hideOn(host, v)) }
		e.Name, e.Placeholder, e.Value = text(e.Name), text(e.Placeholder), text(e.Value)
		e.Href = redact.URL(p.hideOn(host, e.Href))
		for j, o := range e.Options {
			e.Options[j] = text(o)
		}
	}
	for i := range s.Blocks {
		s.Blocks[i].Text = redact.Text(s.Blocks[i].Text)
	}
}

// hideWords shows the secrets in the words of each frame, read as one
// text in document order (blocks, and the name and value of each
// element), and marks the elements that show one off its domains.
func (p *Page) hideWords(s *Snapshot) {
	if len(p.opts.Secrets) == 0 {
		return
	}
	type piece struct {
		text *string
		elem int // the element whose words it is, -1 for a block's
		item [2]int
	}
	byFrame := map[int][]piece{}
	var order []int
	add := func(frame int, pc piece) {
		if _, ok := byFrame[frame]; !ok {
			order = append(order, frame)
		}
		byFrame[frame] = append(byFrame[frame], pc)
	}
	for i := range s.Blocks {
		b := &s.Blocks[i]
		item := [2]int{b.List, b.Item}
		if b.Element >= 0 && b.Element < len(s.Elements) {
			e := &s.Elements[b.Element]
			for _, f := range []*string{&e.Name, &e.Value, &e.Placeholder} {
				add(e.Frame, piece{f, b.Element, item})
			}
			for j := range e.Options {
				add(e.Frame, piece{&e.Options[j], b.Element, item})
			}
			continue
		}
		add(b.Frame, piece{&b.Text, -1, item})
	}
	for _, frame := range order {
		host, pieces := s.hosts[frame], byFrame[frame]
		texts := make([]string, len(pieces))
		for i, pc := range pieces {
			texts[i] = *pc.text
		}
		out, held := p.shown(host, false).ReplaceAll(texts)
		untouchable := map[int][]string{}
		itemHolds := map[[2]int][]string{}
		for i, pc := range pieces {
			*pc.text = out[i]
			names := p.heldOutside(held[i], host)
			if len(names) == 0 {
				continue
			}
			if pc.elem >= 0 {
				untouchable[pc.elem] = append(untouchable[pc.elem], names...)
			}
			if pc.item[1] != 0 {
				itemHolds[pc.item] = append(itemHolds[pc.item], names...)
			}
		}
		for _, pc := range pieces {
			if pc.elem < 0 {
				continue
			}
			names := slices.Concat(untouchable[pc.elem], itemHolds[pc.item])
			e := &s.Elements[pc.elem]
			for _, n := range names {
				if !slices.Contains(e.untouchable, n) {
					e.untouchable = append(e.untouchable, n)
				}
			}
		}
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
