package agent

import (
	"fmt"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// describe names the element a pick acts on, as its snapshot has it, and,
// when another element on the page has the same role and name (a grid's
// twenty "Add to cart"), the item it belongs to: `button "Add to cart" in
// "Walnut dresser"`.
func describe(s *browser.Snapshot, a calltypes.Action) string {
	if a.Index < 0 || a.Index >= len(s.Elements) {
		return ""
	}
	e := s.Elements[a.Index]
	d := e.Role
	if e.Name != "" {
		d += fmt.Sprintf(" %q", clip(e.Name, 40))
	}
	if in := itemOf(s, e); in != "" && shared(s, e) {
		d += fmt.Sprintf(" in %q", clip(in, 40))
	}
	return d
}

// shared reports another element with e's role and name.
func shared(s *browser.Snapshot, e browser.Element) bool {
	for _, o := range s.Elements {
		if o.Index != e.Index && o.Role == e.Role && o.Name == e.Name {
			return true
		}
	}
	return false
}

// itemOf is what names the list item e stands in: the item's first words
// or element name that are not e's own; "" outside a list.
func itemOf(s *browser.Snapshot, e browser.Element) string {
	at := -1
	for i, b := range s.Blocks {
		if b.Element == e.Index {
			at = i
		}
	}
	if at < 0 || s.Blocks[at].Item == 0 {
		return ""
	}
	list, item := s.Blocks[at].List, s.Blocks[at].Item
	for _, b := range s.Blocks {
		if b.List != list || b.Item != item || b.Element == e.Index {
			continue
		}
		if b.Element >= 0 && b.Element < len(s.Elements) {
			if n := s.Elements[b.Element].Name; n != "" {
				return n
			}
			continue
		}
		return b.Text
	}
	return ""
}

// changeOf says what the element at index in before says differently in
// after, the same element on the page: its name, or whether it is checked;
// "" when nothing of it changed or it is gone.
func changeOf(before, after *browser.Snapshot, index int) string {
	i := sameElement(before, after, index)
	if i < 0 {
		return ""
	}
	was, now := before.Elements[index], after.Elements[i]
	switch {
	case now.Name != was.Name && now.Name != "":
		return fmt.Sprintf("it now reads %q", clip(now.Name, 40))
	case now.Checked && !was.Checked:
		return "now checked"
	case was.Checked && !now.Checked:
		return "now unchecked"
	}
	return ""
}
