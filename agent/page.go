package agent

import (
	"cmp"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Per-field bounds, so that no one element (a link holding a paragraph, a
// country list) takes what the rest of the page needs.
const (
	maxNameRunes   = 80
	maxOptionRunes = 40
	maxOptions     = 25
)

// PageOf is the whole page a model call could read of a snapshot, in
// document order and uncut: its blocks as lines, each element with only
// what says something of it. A call type's view cuts it to the type's cap
// (ViewOf).
func PageOf(s *browser.Snapshot) calltypes.Page {
	p := calltypes.Page{URL: s.URL, Title: clip(s.Title, maxNameRunes), Viewport: s.Viewport}
	// What the page said in dialogs since the last look (as it loaded,
	// or when an action asked) and the files it downloaded: notes, kept
	// however the page is cut, so only the last few of each.
	notes := lastNotes(len(s.Dialogs), "dialog", func(i int) string { return s.Dialogs[i].String() })
	notes = append(notes, lastNotes(len(s.Downloads), "download", func(i int) string { return downloadNote(s.Downloads[i]) })...)
	if n := tabsNote(s.Tabs); n != "" {
		notes = append(notes, n)
	}
	for _, u := range s.RefusedFrames {
		notes = append(notes, "a frame from "+clip(u, maxNameRunes)+" was refused, not read: outside the allowed domains")
	}
	for _, n := range notes {
		p.Lines = append(p.Lines, calltypes.Line{Note: true, Text: n, Top: s.Viewport[0], Bottom: s.Viewport[0]})
	}
	for _, b := range s.Blocks {
		l := calltypes.Line{Heading: b.Heading, Offscreen: b.Offscreen, Top: b.Top, Bottom: b.Bottom, List: b.List, Item: b.Item}
		if b.Element >= 0 && b.Element < len(s.Elements) {
			e := element(s.Elements[b.Element])
			l.Element = &e
		} else {
			l.Text = b.Text
		}
		p.Lines = append(p.Lines, l)
	}
	return p
}

// maxNotesOfAKind bounds the dialogs, and the downloads, a view tells
// of: a page that opens a hundred alerts in a loop fills no prompt.
const maxNotesOfAKind = 3

// lastNotes are the notes of the last maxNotesOfAKind of n things of a
// kind (note(i) says the i-th), after one that counts those left out.
func lastNotes(n int, kind string, note func(i int) string) []string {
	var out []string
	from := max(0, n-maxNotesOfAKind)
	if from > 0 {
		out = append(out, plural.Of(from, "earlier "+kind+"/earlier "+kind+"s")+" not shown")
	}
	for i := from; i < n; i++ {
		out = append(out, note(i))
	}
	return out
}

// downloadNote tells of a file saved since the last look, and what it
// begins with when it is text: a report the goal asked for can be read
// without a page that shows it.
func downloadNote(d browser.Download) string { return calltypes.FileNote(d.String(), d.Text) }

// ViewOf is the page a call of type t reads: now, in the type's view and
// within its cap. before is the snapshot the last action was taken on
// (nil when there was none) and acted its element there (-1 for none).
func ViewOf(t calltypes.Type, now, before *browser.Snapshot, acted int) calltypes.Page {
	p := PageOf(now)
	var prev *calltypes.Page
	if before != nil {
		b := PageOf(before)
		prev = &b
	}
	return t.View.Look(p, prev, sameElement(before, now, acted), t.PageTokens, tokens.Count)
}

// sameElement is the index in now of the element at index i in before,
// -1 when it is not on the page any more.
func sameElement(before, now *browser.Snapshot, i int) int {
	if before == nil || i < 0 || i >= len(before.Elements) {
		return -1
	}
	id := before.Elements[i].BackendID
	for _, e := range now.Elements {
		if e.BackendID == id {
			return e.Index
		}
	}
	return -1
}

// element writes a browser element as a line shows it: its attributes
// only where they say something the role and name do not.
func element(e browser.Element) calltypes.Element {
	out := calltypes.Element{
		Index: e.Index, Role: e.Role, Name: clip(e.Name, maxNameRunes), Value: clip(e.Value, maxNameRunes),
		Checked: e.Checked, Disabled: e.Disabled, Hidden: !e.Visible,
	}
	if e.Tag == "input" && !roleSays(e.Role, e.Type) {
		out.Type = e.Type
	}
	if p := clip(e.Placeholder, maxNameRunes); p != out.Name && out.Value == "" {
		out.Placeholder = p
	}
	if e.Href != "" && (out.Name == "" || leavesSite(e.Href)) {
		out.Href = clip(e.Href, maxNameRunes)
	}
	for i, opt := range e.Options {
		if i == maxOptions {
			out.MoreOptions = len(e.Options) - maxOptions
			break
		}
		out.Options = append(out.Options, clip(opt, maxOptionRunes))
	}
	return out
}

// roleSays reports an input type its role already says.
func roleSays(role, typ string) bool {
	switch typ {
	case "", "text":
		return true
	case "search":
		return role == "searchbox"
	case "checkbox", "radio":
		return role == typ
	case "submit", "button", "reset", "image":
		return role == "button"
	case "number":
		return role == "spinbutton"
	case "range":
		return role == "slider"
	}
	return false
}

// leavesSite reports a link the browser wrote as a whole URL: one to
// another site (or a mail address), which its name alone does not say. A
// link on the page's own site is written as a path, which says no more
// than its name.
func leavesSite(href string) bool {
	if strings.HasPrefix(href, "/") || strings.HasPrefix(href, "#") {
		return false
	}
	u, err := url.Parse(href)
	return err != nil || u.Scheme != ""
}

// clip keeps the first n runes of s, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// tabsNote names the open tabs, when there are several, which one the
// page is, and the actions that move between them (told here, not in
// every call's list): tab 1 "Orders" · tab 2 "Order 7 details" (this
// page); tab "N" switches to one, close-tab closes this one.
func tabsNote(tabs []browser.Tab) string {
	if len(tabs) < 2 {
		return ""
	}
	parts := make([]string, len(tabs))
	for i, t := range tabs {
		parts[i] = fmt.Sprintf("tab %d %s", t.Number, strconv.Quote(clip(cmp.Or(t.Title, pathOf(t.URL)), maxNameRunes)))
		if t.Current {
			parts[i] += " (this page)"
		}
	}
	return "open tabs: " + strings.Join(parts, " · ") + `; tab "N" switches to one, close-tab closes this one`
}
