package browser

import (
	"cmp"
	"slices"
	"strings"
)

// blockBuilder is the walker's account of the page as it reads: the words
// since the last block, the blocks so far, and what the walk is inside.
type blockBuilder struct {
	line    pendingLine
	drafts  []draft
	heading int        // the level of the heading being walked, 0 outside one
	owners  []int      // serials of the elements being walked, outermost first
	items   []listItem // the list items being walked, outermost first
	infos   []elemInfo // per element of the snapshot, in its order
	hints   [][]string // per element being walked: its descendants' names for it
	serial  int        // the last serial given to an element, a list or an item
}

// draft is a block before the walk's end settles it: an element's block
// names it by serial, since elements may still be dropped.
type draft struct {
	Block
	serial int        // the element's, 0 for words
	owner  int        // the innermost element it is inside, 0 for none
	items  []listItem // the list items it is inside, outermost first
}

type listItem struct{ list, item int }

// elemInfo is what settling the blocks needs to know of an element.
type elemInfo struct {
	serial   int
	weakName bool // no name, or one from a placeholder or title: a label beside it says better
	unnamed  bool // named by nothing a person reads, at most by its author's words for it
}

// opened is an element being walked.
type opened struct {
	serial, draft int
}

// pendingLine collects the words of the block being read.
type pendingLine struct {
	b           strings.Builder
	top, bot    float64
	left, right float64
	onscreen    bool
	sep         string // what joins the next word: " | " between table cells
}

// words adds a text node's words to the line, with its box.
func (w *walker) words(t string, box [4]float64, offscreen bool) {
	l := &w.line
	for _, f := range strings.Fields(t) {
		if l.b.Len() == 0 {
			l.top, l.bot = box[1], box[1]+box[3]
			l.left, l.right = box[0], box[0]+box[2]
		} else {
			l.b.WriteString(cmp.Or(l.sep, " "))
		}
		l.sep = ""
		l.b.WriteString(f)
	}
	if l.b.Len() > 0 {
		l.top, l.bot = min(l.top, box[1]), max(l.bot, box[1]+box[3])
		l.left, l.right = min(l.left, box[0]), max(l.right, box[0]+box[2])
		l.onscreen = l.onscreen || !offscreen
	}
}

// cell separates a table's cells within their row's line.
func (w *walker) cell() {
	if w.line.b.Len() > 0 {
		w.line.sep = " | "
	}
}

func (w *walker) owner() int {
	if len(w.owners) == 0 {
		return 0
	}
	return w.owners[len(w.owners)-1]
}

// flush ends the line of words, if it holds any, as a block.
func (w *walker) flush() {
	l := &w.line
	if l.b.Len() == 0 {
		return
	}
	w.drafts = append(w.drafts, draft{
		Block: Block{Text: l.b.String(), Heading: w.heading, Element: -1, Top: l.top, Bottom: l.bot, Offscreen: !l.onscreen, Frame: w.frame, left: l.left, right: l.right},
		owner: w.owner(), items: slices.Clone(w.items),
	})
	*l = pendingLine{}
}

// addElement gives the element just appended to the snapshot its block.
func (w *walker) addElement(box [4]float64, offscreen bool, info elemInfo) {
	w.flush()
	w.serial++
	info.serial = w.serial
	w.infos = append(w.infos, info)
	w.drafts = append(w.drafts, draft{
		Block:  Block{Heading: w.heading, Element: -1, Top: box[1], Bottom: box[1] + box[3], Offscreen: offscreen, Frame: w.frame, left: box[0], right: box[0] + box[2]},
		serial: w.serial, owner: w.owner(), items: slices.Clone(w.items),
	})
}

// open starts the walk inside element index: its words are its own.
func (w *walker) open(index int) opened {
	o := opened{serial: w.infos[index].serial, draft: len(w.drafts) - 1}
	w.owners = append(w.owners, o.serial)
	w.hints = append(w.hints, nil)
	return o
}

// close ends the walk inside an element.
func (w *walker) close() {
	w.flush()
	w.owners = w.owners[:len(w.owners)-1]
}

func (w *walker) enterItem(list int) {
	w.serial++
	w.items = append(w.items, listItem{list, w.serial})
}

func (w *walker) leaveItem(flush bool) {
	if flush {
		w.flush()
	}
	w.items = w.items[:len(w.items)-1]
}

// content is the element's own words (not its child elements'), how
// many elements it holds, and how many items of a list inside it.
func (w *walker) content(o opened) (own string, children, items int) {
	var words []string
	depth := len(w.items) // the items the element itself stands in
	inner := map[int]bool{}
	for _, d := range w.drafts[o.draft+1:] {
		switch {
		case d.serial != 0:
			children++
		case d.owner == o.serial:
			words = append(words, d.Text)
		}
		if len(d.items) > depth {
			inner[d.items[depth].item] = true
		}
	}
	return strings.Join(words, " "), children, len(inner)
}

// ownDrafts are the positions of the element's own blocks of words.
func (w *walker) ownDrafts(o opened) []int {
	var out []int
	for i := o.draft + 1; i < len(w.drafts); i++ {
		if d := w.drafts[i]; d.serial == 0 && d.owner == o.serial {
			out = append(out, i)
		}
	}
	return out
}

// coverName lets the element's line stand for its own words when its
// name says them: they are not read twice. Words that run longer than a
// name are kept as lines of their own; an element named by them is then
// named by their first line.
func (w *walker) coverName(o opened, e *Element) {
	own := w.ownDrafts(o)
	if len(own) == 0 {
		return
	}
	var words []string
	for _, i := range own {
		words = append(words, w.drafts[i].Text)
	}
	all := norm(strings.Join(words, " "))
	if len([]rune(all)) <= w.opts.withDefaults().MaxNameChars {
		w.removeDrafts(own...)
		return
	}
	if norm(e.Name) == all {
		e.Name = w.drafts[own[0]].Text
		w.removeDrafts(own[0])
	}
}

// nameFromWords names an element by its own words, and takes them off
// the page's lines, as coverName does.
func (w *walker) nameFromWords(o opened, own string) string {
	own = norm(own)
	if own == "" {
		return ""
	}
	idx := w.ownDrafts(o)
	if len([]rune(own)) <= w.opts.withDefaults().MaxNameChars {
		w.removeDrafts(idx...)
		return own
	}
	first := w.drafts[idx[0]].Text
	w.removeDrafts(idx[0])
	return first
}

func (w *walker) removeDrafts(at ...int) {
	for k := len(at) - 1; k >= 0; k-- {
		w.drafts = slices.Delete(w.drafts, at[k], at[k]+1)
	}
}

// drop removes an element and renumbers the ones after it; its words
// become its container's.
func (w *walker) drop(index int, o opened) {
	els := w.snapshot.Elements
	els = append(els[:index], els[index+1:]...)
	for i := index; i < len(els); i++ {
		els[i].Index = i
	}
	w.snapshot.Elements = els
	w.infos = slices.Delete(w.infos, index, index+1)
	w.drafts = slices.Delete(w.drafts, o.draft, o.draft+1)
	for i := o.draft; i < len(w.drafts); i++ { // what it held comes after it
		if w.drafts[i].owner == o.serial {
			w.drafts[i].owner = w.owner()
		}
	}
}

// maxItemLines is the most lines an item of a list may hold to be kept
// or cut whole; a larger one is a section, not an item.
const maxItemLines = 12

// finishBlocks settles the drafts into the snapshot's blocks: elements by
// index, fields named by the words beside them, and each block's list
// item the outermost that is small enough to be one.
func (w *walker) finishBlocks() {
	index := map[int]int{}
	for i, in := range w.infos {
		index[in.serial] = i
	}
	blocks := make([]draft, 0, len(w.drafts))
	for _, d := range w.drafts {
		if d.serial != 0 {
			d.Element = index[d.serial]
		}
		blocks = append(blocks, d)
	}
	blocks = w.label(blocks)
	lines := map[int]int{}
	for _, d := range blocks {
		for _, it := range d.items {
			lines[it.item]++
		}
	}
	lists, items := map[int]int{}, map[int]int{}
	number := func(m map[int]int, k int) int {
		if n, ok := m[k]; ok {
			return n
		}
		m[k] = len(m) + 1
		return m[k]
	}
	out := make([]Block, len(blocks))
	for i, d := range blocks {
		for _, it := range d.items {
			if lines[it.item] <= maxItemLines {
				d.List, d.Item = number(lists, it.list), number(items, it.item)
				break
			}
		}
		out[i] = d.Block
	}
	w.snapshot.Blocks = out
}

// label names fields by the words a person reads beside them, and takes
// away words that only repeat a field's name: a text box's label stands
// before it, a checkbox's after it on the same row.
func (w *walker) label(blocks []draft) []draft {
	gone := make([]bool, len(blocks))
	text := func(k int) bool {
		return k >= 0 && k < len(blocks) && !gone[k] && blocks[k].serial == 0
	}
	for k, b := range blocks {
		if b.serial == 0 {
			continue
		}
		e := &w.snapshot.Elements[b.Element]
		if !isField(*e) {
			continue
		}
		check := e.Type == "checkbox" || e.Type == "radio" || e.Role == "checkbox" || e.Role == "radio" || e.Role == "switch"
		if e.Name != "" && !w.infos[b.Element].weakName {
			for _, j := range []int{k - 1, k + 1} {
				if text(j) && norm(blocks[j].Text) == e.Name {
					gone[j] = true
					e.shows = append(e.shows, blocks[j].area()) // its words are now the element's
					break
				}
			}
			continue
		}
		var at []int
		if check {
			at = []int{k + 1, k - 1}
		} else {
			at = []int{k - 1}
		}
		for _, j := range at {
			if text(j) && isLabel(blocks[j].Block, b.Block, j > k) {
				e.Name, gone[j] = norm(blocks[j].Text), true
				e.shows = append(e.shows, blocks[j].area())
				w.infos[b.Element].unnamed = false
				break
			}
		}
	}
	out := blocks[:0]
	for k, b := range blocks {
		if !gone[k] {
			out = append(out, b)
		}
	}
	return out
}

// Bounds of a label: a few words, near the field.
const (
	maxLabelRunes = 60
	maxLabelWords = 8
	maxLabelGap   = 48 // CSS pixels between a label's bottom and its field's top
)

// isLabel reports whether words read as the label of a field: short, not
// a heading, and beside it (after is the words following the field, on
// its row) or just above it.
func isLabel(words, field Block, after bool) bool {
	t := norm(words.Text)
	if words.Heading > 0 || len([]rune(t)) > maxLabelRunes || len(strings.Fields(t)) > maxLabelWords {
		return false
	}
	sameRow := words.Top < field.Bottom && field.Top < words.Bottom
	if after {
		return sameRow
	}
	return sameRow || (words.Bottom <= field.Top+1 && field.Top-words.Bottom <= maxLabelGap)
}

// isField reports an element that holds a value: what a label names.
func isField(e Element) bool {
	switch e.Tag {
	case "textarea", "select":
		return true
	case "input":
		switch e.Type {
		case "button", "submit", "reset", "image", "hidden":
			return false
		}
		return true
	}
	switch e.Role {
	case "textbox", "searchbox", "combobox", "spinbutton", "checkbox", "radio", "switch", "slider", "listbox":
		return true
	}
	return false
}
