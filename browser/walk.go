package browser

import (
	"hash"
	"net/url"
	"strings"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// walker turns a DOMSnapshot into elements and blocks in document order,
// entering frames where their owner element stands.
type walker struct {
	snap       *domsnapshot.CaptureSnapshotResult
	ax         map[cdp.BackendNodeID]axInfo
	opts       SnapshotOptions
	viewport   [4]float64 // x, y, width, height of the top document's viewport
	snapshot   *Snapshot
	text       textBuilder // the snapshot's Text
	hash       hash.Hash
	frames     int
	frame      int                    // the frame being walked: 0 for the top document
	frameHosts map[cdp.FrameID]string // each frame's host, as the browser's frame tree has it
	ariaHidden int                    // depth inside aria-hidden="true" subtrees
	pictures   pictures               // what Snapshot.Visual measures
	ink        []rect                 // per element being walked: where its content is painted

	blockBuilder
}

func (w *walker) str(i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(w.snap.Strings) {
		return ""
	}
	return w.snap.Strings[i]
}

// docView is one document's tables, indexed for the walk.
type docView struct {
	d          *domsnapshot.DocumentSnapshot
	children   [][]int
	layout     []int // node → layout index, -1 when it has no box
	inputValue map[int]string
	textValue  map[int]string
	checked    map[int]bool
	selected   map[int]bool // options
	clickable  map[int]bool
	contentDoc map[int]int
	items      map[int]int // nodes that are items of a list of like items → the list
	url        *url.URL
	frame      int
	offset     [2]float64
}

func rareStrings(w *walker, r *domsnapshot.RareStringData) map[int]string {
	m := map[int]string{}
	if r != nil {
		for i, idx := range r.Index {
			if i < len(r.Value) {
				m[int(idx)] = w.str(r.Value[i])
			}
		}
	}
	return m
}

func rareBools(r *domsnapshot.RareBooleanData) map[int]bool {
	m := map[int]bool{}
	if r != nil {
		for _, idx := range r.Index {
			m[int(idx)] = true
		}
	}
	return m
}

func (w *walker) document(di, frame int, offset [2]float64) {
	if di < 0 || di >= len(w.snap.Documents) {
		return
	}
	d := w.snap.Documents[di]
	n := d.Nodes
	if n == nil {
		return
	}
	v := &docView{d: d, frame: frame, offset: offset,
		children:   make([][]int, len(n.ParentIndex)),
		layout:     make([]int, len(n.ParentIndex)),
		inputValue: rareStrings(w, n.InputValue),
		textValue:  rareStrings(w, n.TextValue),
		checked:    rareBools(n.InputChecked),
		selected:   rareBools(n.OptionSelected),
		clickable:  rareBools(n.IsClickable),
		contentDoc: map[int]int{},
	}
	v.url, _ = url.Parse(w.str(d.DocumentURL))
	w.noteFrame(frame, d, v.url)
	outer := w.frame
	w.frame = frame
	defer func() {
		w.flush() // a line of words is one frame's
		w.frame = outer
	}()
	if n.ContentDocumentIndex != nil {
		for i, idx := range n.ContentDocumentIndex.Index {
			if i < len(n.ContentDocumentIndex.Value) {
				v.contentDoc[int(idx)] = int(n.ContentDocumentIndex.Value[i])
			}
		}
	}
	for i := range v.layout {
		v.layout[i] = -1
	}
	if d.Layout != nil {
		for li, ni := range d.Layout.NodeIndex {
			if int(ni) < len(v.layout) {
				v.layout[ni] = li
			}
		}
	}
	roots := []int{}
	for i, p := range n.ParentIndex {
		if p < 0 {
			roots = append(roots, i)
		} else if int(p) < len(v.children) {
			v.children[p] = append(v.children[p], i)
		}
	}
	v.items = w.listItems(v)
	for _, r := range roots {
		w.node(v, r)
	}
}

// noteFrame keeps the host of the frame numbered frame: the browser's
// (its frame tree's origin, which no script of the page shapes), else the
// document's URL's.
func (w *walker) noteFrame(frame int, d *domsnapshot.DocumentSnapshot, u *url.URL) {
	host, ok := w.frameHosts[cdp.FrameID(w.str(d.FrameID))]
	if !ok && u != nil {
		host = u.Hostname()
	}
	if w.snapshot.hosts == nil {
		w.snapshot.hosts = map[int]string{}
	}
	w.snapshot.hosts[frame] = host
}

// skipped elements hold nothing a person reads or uses.
var skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true, "meta": true, "link": true}

// attrsOf is a node's attributes, names lower-cased.
func (w *walker) attrsOf(v *docView, i int) map[string]string {
	attrs := map[string]string{}
	n := v.d.Nodes
	if i < len(n.Attributes) {
		a := n.Attributes[i]
		for k := 0; k+1 < len(a); k += 2 {
			attrs[strings.ToLower(w.str(domsnapshot.StringIndex(a[k])))] = w.str(domsnapshot.StringIndex(a[k+1]))
		}
	}
	return attrs
}

// style is one of snapshotStyles of a node with a box, "" without one.
func (w *walker) style(v *docView, i, which int) string {
	if i < 0 || i >= len(v.layout) {
		return ""
	}
	li := v.layout[i]
	if li < 0 || li >= len(v.d.Layout.Styles) || which >= len(v.d.Layout.Styles[li]) {
		return ""
	}
	return w.str(domsnapshot.StringIndex(v.d.Layout.Styles[li][which]))
}

// box is a node's layout box on the page (the top document's
// coordinates), and whether it has one.
func (w *walker) box(v *docView, i int) (b [4]float64, ok bool) {
	li := v.layout[i]
	if li < 0 || li >= len(v.d.Layout.Bounds) || len(v.d.Layout.Bounds[li]) != 4 {
		return b, false
	}
	r := v.d.Layout.Bounds[li]
	return [4]float64{r[0] + v.offset[0], r[1] + v.offset[1], r[2], r[3]}, true
}

// offscreen reports a box outside the viewport.
func (w *walker) offscreen(b [4]float64) bool {
	vp := w.viewport
	return vp[2] > 0 && (b[0]+b[2] <= vp[0] || b[0] >= vp[0]+vp[2] || b[1]+b[3] <= vp[1] || b[1] >= vp[1]+vp[3])
}

func (w *walker) node(v *docView, i int) {
	n := v.d.Nodes
	switch n.NodeType[i] {
	case 3: // text
		if li := v.layout[i]; li >= 0 && li < len(v.d.Layout.Text) {
			t := w.str(v.d.Layout.Text[li])
			w.text.add(t)
			w.hash.Write([]byte(t))
			if b, ok := w.box(v, i); ok {
				w.words(t, b, w.offscreen(b))
				w.inked(b)
			}
		}
		return
	case 1, 9, 11: // element, document, shadow root
	default:
		return
	}
	tag := strings.ToLower(w.str(n.NodeName[i]))
	if skipped[tag] {
		return
	}
	attrs := w.attrsOf(v, i)
	display, visibility := w.style(v, i, 0), w.style(v, i, 1)
	w.fingerprint(v, i, tag, attrs)
	picture := w.measure(v, i, tag, visibility)
	if b, ok := w.box(v, i); ok {
		w.inked(b)
	}

	li := v.layout[i]
	block := li >= 0 && isBlock(display) && display != "table-cell"
	switch {
	case display == "table-cell":
		w.cell()
	case block || tag == "br":
		w.flush()
		w.text.newline()
	}
	// aria-hidden content is decoration or a duplicate (an image link
	// next to a title link): its text is read, its controls not listed.
	hidden := attrs["aria-hidden"] == "true"
	if hidden {
		w.ariaHidden++
	}
	level := headingLevel(tag, attrs)
	outer := w.heading
	if level > 0 {
		w.flush()
		w.heading = level
	}
	if list, ok := v.items[i]; ok {
		w.enterItem(list)
	}
	w.hint(tag, attrs)
	var el *Element
	weak := false
	if li >= 0 && n.NodeType[i] == 1 && w.ariaHidden == 0 && visibility != "hidden" && visibility != "collapse" {
		var ok bool
		if ok, weak = w.interactive(v, i, tag, attrs); ok {
			el = w.element(v, i, tag, attrs)
		}
	}
	w.noteField(v, i, tag, attrs, el != nil)
	var open opened
	if el != nil {
		open = w.open(el.Index)
		w.ink = append(w.ink, w.boxRect(v, i))
	}
	for _, c := range v.children[i] {
		w.node(v, c)
	}
	w.unread(v, i, tag)
	if di, ok := v.contentDoc[i]; ok {
		w.frames++
		off := v.offset
		if b, ok := w.box(v, i); ok {
			off = [2]float64{b[0], b[1]}
		}
		w.flush()
		w.text.newline()
		w.document(di, w.frames, off)
		w.flush()
		w.text.newline()
	}
	if hidden {
		w.ariaHidden--
	}
	if picture {
		w.pictures.inside--
	}
	if el != nil {
		w.snapshot.Elements[el.Index].shows = []rect{w.popInk()}
		w.close()
		w.finish(el.Index, open, v, i, tag, attrs, weak)
		w.hints = w.hints[:len(w.hints)-1]
	}
	if _, ok := v.items[i]; ok {
		w.leaveItem(display != "table-cell") // a row's cells share its line
	}
	if level > 0 {
		w.flush()
		w.heading = outer
	}
	if block {
		w.flush()
		w.text.newline()
	}
	w.hash.Write([]byte("</>"))
}

// fingerprint hashes what tells one state of the page from another.
func (w *walker) fingerprint(v *docView, i int, tag string, attrs map[string]string) {
	w.hash.Write([]byte("<" + tag))
	for _, k := range []string{"id", "class", "role", "type", "name", "href", "aria-label", "disabled", "aria-expanded", "aria-selected"} {
		if val, ok := attrs[k]; ok {
			w.hash.Write([]byte(" " + k + "=" + val))
		}
	}
	if val, ok := v.inputValue[i]; ok {
		if tag == "input" && strings.EqualFold(attrs["type"], "password") && val != "" {
			val = "••••" // a password is not hashed into the fingerprint either
		}
		w.hash.Write([]byte(" value=" + val))
	}
	if v.checked[i] {
		w.hash.Write([]byte(" checked"))
	}
	w.hash.Write([]byte(">"))
}

// headingLevel is a heading's level, 0 for anything else.
func headingLevel(tag string, attrs map[string]string) int {
	if len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6' {
		return int(tag[1] - '0')
	}
	if attrs["role"] == "heading" {
		if l := attrs["aria-level"]; len(l) == 1 && l[0] >= '1' && l[0] <= '6' {
			return int(l[0] - '0')
		}
		return 2
	}
	return 0
}

func isBlock(display string) bool {
	switch display {
	case "", "inline", "inline-block", "inline-flex", "inline-grid", "contents", "none":
		return false
	}
	return true
}

// listItems marks the children of a node that repeat one shape at least
// twice or more (the same tag and classes, or the same role): the cards
// of a grid, the rows of a table, the entries of a menu.
func (w *walker) listItems(v *docView) map[int]int {
	const minItems = 2
	items := map[int]int{}
	n := v.d.Nodes
	for _, kids := range v.children {
		if len(kids) < minItems {
			continue
		}
		shapes := map[string][]int{}
		for _, c := range kids {
			if n.NodeType[c] != 1 || v.layout[c] < 0 {
				continue
			}
			a := w.attrsOf(v, c)
			shape := strings.ToLower(w.str(n.NodeName[c])) + "." + strings.Join(strings.Fields(a["class"]), ".") + "@" + a["role"]
			shapes[shape] = append(shapes[shape], c)
		}
		for _, cs := range shapes {
			if len(cs) >= minItems {
				w.serial++
				for _, c := range cs {
					items[c] = w.serial
				}
			}
		}
	}
	return items
}

// interactive says whether a person could use the element; weak when
// only a click listener, a tabindex or a pointer cursor says so, which a
// container that delegates clicks for its children also has.
func (w *walker) interactive(v *docView, i int, tag string, attrs map[string]string) (ok, weak bool) {
	switch tag {
	case "a":
		if _, ok := attrs["href"]; ok {
			return true, false
		}
	case "button", "select", "textarea", "summary":
		return true, false
	case "input":
		return attrs["type"] != "hidden", false
	case "html", "body", "iframe", "frame", "label", "#document", "#document-fragment":
		return false, false
	}
	if interactiveRoles[attrs["role"]] || interactiveRoles[w.ax[v.d.Nodes.BackendNodeID[i]].role] {
		return true, false
	}
	if ce, ok := attrs["contenteditable"]; ok && (ce == "" || ce == "true" || ce == "plaintext-only") {
		return true, false
	}
	if t, ok := attrs["tabindex"]; ok && t != "" && !strings.HasPrefix(t, "-") {
		return true, true
	}
	if v.clickable[i] {
		return true, true
	}
	// A pointer cursor where the parent's is not: what a page styles as
	// clickable and handles with a listener further up.
	if w.style(v, i, 2) == "pointer" {
		if p := int(v.d.Nodes.ParentIndex[i]); p >= 0 && w.style(v, p, 2) != "pointer" {
			return true, true
		}
	}
	return false, false
}

// element fills what is known before the element's children are walked,
// and opens its block.
func (w *walker) element(v *docView, i int, tag string, attrs map[string]string) *Element {
	s := w.snapshot
	id := v.d.Nodes.BackendNodeID[i]
	a := w.ax[id]
	e := Element{
		Index:       len(s.Elements),
		Tag:         tag,
		Role:        a.role,
		Name:        strings.Join(strings.Fields(a.name), " "),
		Placeholder: attrs["placeholder"],
		Checked:     v.checked[i] || a.checked,
		Frame:       v.frame,
		BackendID:   id,
	}
	if tag == "input" {
		e.Type = strings.ToLower(attrs["type"])
		if e.Type == "" {
			e.Type = "text"
		}
	}
	_, dis := attrs["disabled"]
	e.Disabled = a.disabled || attrs["aria-disabled"] == "true" || (dis && formControl(tag))
	if href, ok := attrs["href"]; ok && tag == "a" {
		e.Href = shortHref(v.url, s.URL, href)
	}
	switch {
	case tag == "textarea":
		e.Value = v.textValue[i]
	case tag == "input" && e.Type == "password":
		if v.inputValue[i] != "" {
			e.Value = "••••" // never show a password to a model
		}
		// Nor as a name: whatever an accessibility tree made of the value
		// is dropped (the name comes from a label, aria or placeholder).
		if e.Name != "" && (e.Name == norm(v.inputValue[i]) || e.Name == norm(attrs["value"])) {
			e.Name = ""
		}
	case tag == "input" && !buttonLike(e.Type):
		e.Value = v.inputValue[i]
	}
	b, ok := w.box(v, i)
	if ok {
		e.Visible = b[2] > 0 && b[3] > 0
		e.Offscreen = w.offscreen(b)
	}
	s.Elements = append(s.Elements, e)
	w.addElement(b, e.Offscreen, elemInfo{weakName: a.weakName || e.Name == ""})
	return &s.Elements[len(s.Elements)-1]
}

// finish completes an element once its content is known: a select's
// options; a name from its words, its label or its author's words; a
// role; and whether a container that only listens for clicks is kept.
func (w *walker) finish(index int, o opened, v *docView, i int, tag string, attrs map[string]string, weak bool) {
	// s.Elements may have grown since; e must be re-found by index.
	e := &w.snapshot.Elements[index]
	if tag == "select" {
		var selected string
		w.options(v, i, &e.Options, &selected)
		e.Value = selected
	}
	own, children, items := w.content(o)
	if isField(*e) {
		// A field's words are its options or its value, which its line
		// holds.
		w.removeDrafts(w.ownDrafts(o)...)
		own = ""
	}
	if weak && (items > 1 || !keepContainer(own, children)) {
		// A container listening for its children's clicks: the children
		// are what a person uses, and its words stay the page's.
		w.drop(index, o)
		return
	}
	switch {
	case weak && e.Name == "":
		// What a click handler makes clickable is named by its words.
		e.Name = w.nameFromWords(o, own)
	case e.Name != "":
		w.coverName(o, e)
	}
	if e.Name == "" {
		value := attrs["value"]
		if tag == "input" && e.Type == "password" {
			value = "" // a password's value is a secret, never a name
		}
		// The first that says something; its own words only then, since
		// naming by them takes them off the page's lines.
		words := func() string { return w.nameFromWords(o, own) }
		for _, c := range []func() string{attr(attrs, "aria-label"), attr(attrs, "title"), attr(attrs, "alt"), attr(attrs, "placeholder"), words, func() string { return value }, attr(attrs, "name")} {
			if n := norm(c()); n != "" {
				e.Name = n
				break
			}
		}
	}
	if !hasLetter(e.Name) {
		// Nothing a person reads names it, or only a count ("0" on a cart
		// icon): what its author called it (a class, an id, an icon's
		// name) says what it is.
		w.infos[index].unnamed = true
		e.Name = norm(strings.Join(w.hintWords(attrs), " ") + " " + e.Name)
	}
	if e.Role == "" || e.Role == "generic" || e.Role == "none" || e.Role == "StaticText" {
		e.Role = roleOf(tag, e.Type, attrs["role"])
	}
}

// attr reads an attribute when called.
func attr(attrs map[string]string, name string) func() string {
	return func() string { return attrs[name] }
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// keepContainer says whether an element made clickable by a listener (or
// a tabindex, or a cursor) is one a person clicks, as a row of a list or
// a card is, rather than a region that passes its children's clicks on:
// it has words or a name of its own, holds few elements, and not a page's
// worth of text. One that holds a list's items (a grid) is a region.
func keepContainer(own string, children int) bool {
	switch {
	case children > maxClickableChildren, len(own) > maxClickableWords:
		return false
	case own == "" && children > 0:
		return false
	}
	return own != "" || children == 0
}

// Bounds of an element made clickable by a listener: a row with a star and
// a bin in it is one; a list holding a dozen buttons is not.
const (
	maxClickableChildren = 3
	maxClickableWords    = 300
)

func (w *walker) options(v *docView, i int, out *[]string, selected *string) {
	n := v.d.Nodes
	for _, c := range v.children[i] {
		tag := strings.ToLower(w.str(n.NodeName[c]))
		switch tag {
		case "optgroup":
			w.options(v, c, out, selected)
		case "option":
			label := ""
			for k := 0; c < len(n.Attributes) && k+1 < len(n.Attributes[c]); k += 2 {
				if w.str(domsnapshot.StringIndex(n.Attributes[c][k])) == "label" {
					label = w.str(domsnapshot.StringIndex(n.Attributes[c][k+1]))
				}
			}
			if label == "" {
				var b strings.Builder
				for _, t := range v.children[c] {
					b.WriteString(w.str(n.NodeValue[t]))
				}
				label = strings.Join(strings.Fields(b.String()), " ")
			}
			*out = append(*out, label)
			if v.selected[c] {
				*selected = label
			}
		}
	}
}

func formControl(tag string) bool {
	switch tag {
	case "button", "input", "select", "textarea", "fieldset", "optgroup", "option":
		return true
	}
	return false
}

// norm collapses a string's white space as names are.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func buttonLike(t string) bool {
	switch t {
	case "button", "submit", "reset", "image", "checkbox", "radio", "file", "color", "range":
		return true
	}
	return false
}

func roleOf(tag, typ, role string) string {
	if role != "" {
		return role
	}
	switch tag {
	case "a":
		return "link"
	case "button", "summary":
		return "button"
	case "select":
		return "combobox"
	case "textarea":
		return "textbox"
	case "input":
		switch typ {
		case "checkbox", "radio":
			return typ
		case "button", "submit", "reset", "image":
			return "button"
		case "search":
			return "searchbox"
		case "range":
			return "slider"
		case "number":
			return "spinbutton"
		}
		return "textbox"
	}
	return "clickable"
}

// shortHref writes a link as a path when it stays on the page's origin.
func shortHref(base *url.URL, pageURL, href string) string {
	if base == nil {
		return href
	}
	u, err := base.Parse(href)
	if err != nil {
		return href
	}
	if pu, err := url.Parse(pageURL); err == nil && pu.Scheme == u.Scheme && pu.Host == u.Host {
		s := u.EscapedPath()
		if u.RawQuery != "" {
			s += "?" + u.RawQuery
		}
		if u.Fragment != "" {
			s += "#" + u.Fragment
		}
		return s
	}
	return u.String()
}

// textBuilder collects rendered text: words joined by one space, blocks by
// one line break.
type textBuilder struct{ b strings.Builder }

func (t *textBuilder) add(s string) {
	for _, f := range strings.Fields(s) {
		if t.b.Len() > 0 {
			last := t.b.String()[t.b.Len()-1]
			if last != '\n' && last != ' ' {
				t.b.WriteByte(' ')
			}
		}
		t.b.WriteString(f)
	}
}

func (t *textBuilder) newline() {
	if t.b.Len() > 0 && t.b.String()[t.b.Len()-1] != '\n' {
		t.b.WriteByte('\n')
	}
}

func (t *textBuilder) String() string { return strings.TrimSpace(t.b.String()) }
