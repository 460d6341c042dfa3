package agent

import (
	"encoding/json"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// PageOptions bound the page a prompt carries.
type PageOptions struct {
	// MaxTokens caps the page as the prompt carries it (its JSON);
	// DefaultPageTokens when zero.
	MaxTokens int
	// Count measures tokens; the models' tokenizer (o200k) when nil.
	Count func(string) int
}

// DefaultPageTokens is the page cap when PageOptions leave it out: the
// snapshot's own default.
const DefaultPageTokens = 2000

// Per-field bounds, so that no one element (a link holding a paragraph, a
// country list) takes what the rest of the page needs.
const (
	maxNameRunes   = 80
	maxOptionRunes = 40
	maxOptions     = 50
)

// PageOf turns a snapshot into the page a model call sees, within the
// cap: it is cut the way Snapshot.Render cuts (text first, then elements
// from the end), measured on the JSON the prompt will hold, and Cut says
// what was left out. Every prompt built from it is bounded by
// construction.
func PageOf(s *browser.Snapshot, o PageOptions) calltypes.Page {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultPageTokens
	}
	if o.Count == nil {
		o.Count = tokens.Count
	}
	fitted, cut := s.Fit(func(c *browser.Snapshot, cut browser.Cut) bool {
		b, err := json.Marshal(convert(c, cut))
		return err == nil && o.Count(string(b)) <= o.MaxTokens
	})
	return convert(fitted, cut)
}

func convert(s *browser.Snapshot, cut browser.Cut) calltypes.Page {
	p := calltypes.Page{URL: s.URL, Title: clip(s.Title, maxNameRunes), Text: s.Text, Cut: cut.String()}
	for _, e := range s.Elements {
		p.Elements = append(p.Elements, element(e))
	}
	return p
}

func element(e browser.Element) calltypes.Element {
	out := calltypes.Element{
		Index: e.Index, Role: e.Role, Name: clip(e.Name, maxNameRunes), Tag: e.Tag, Type: e.Type,
		Placeholder: clip(e.Placeholder, maxNameRunes), Href: clip(e.Href, maxNameRunes), Value: clip(e.Value, maxNameRunes),
		Checked: e.Checked, Disabled: e.Disabled, Hidden: !e.Visible, Offscreen: e.Offscreen,
	}
	if out.Placeholder == out.Name {
		out.Placeholder = ""
	}
	for i, opt := range e.Options {
		if i == maxOptions {
			break
		}
		out.Options = append(out.Options, clip(opt, maxOptionRunes))
	}
	return out
}

// clip keeps the first n runes of s, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
