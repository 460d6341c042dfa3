package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Observe takes a snapshot of the page: its interactive elements, from the
// DOM and layout (DOMSnapshot, which includes same-origin frames and open
// shadow roots) named and typed by the accessibility tree, and its
// rendered text. Its Index method names an element for an action.
func (p *Page) Observe(ctx context.Context) (*Snapshot, error) {
	var s *Snapshot
	err := p.do(ctx, "observe", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		var err error
		s, err = capture(ctx, p.opts.Snapshot)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.page = p
	return s, nil
}

// axInfo is what the accessibility tree says about one DOM node.
type axInfo struct {
	role, name string
	disabled   bool
	checked    bool
}

// styles asked of every layout node, in this order.
var snapshotStyles = []string{"display", "visibility", "cursor"}

// interactiveRoles are roles a person can act on.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "textbox": true,
	"searchbox": true, "combobox": true, "listbox": true, "menuitem": true,
	"menuitemcheckbox": true, "menuitemradio": true, "option": true, "switch": true,
	"tab": true, "slider": true, "spinbutton": true, "treeitem": true,
}

func capture(ctx context.Context, o SnapshotOptions) (*Snapshot, error) {
	snap, err := chromedp.Call(ctx, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: snapshotStyles})
	if err != nil {
		return nil, err
	}
	if len(snap.Documents) == 0 {
		return nil, errNoDocument
	}
	metrics, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	ax := map[cdp.BackendNodeID]axInfo{}
	var frames []cdp.FrameID
	var collect func(t *page.FrameTree)
	collect = func(t *page.FrameTree) {
		if t == nil || t.Frame == nil {
			return
		}
		frames = append(frames, t.Frame.ID)
		for _, c := range t.ChildFrames {
			collect(c)
		}
	}
	collect(tree.FrameTree)
	for i, id := range frames {
		res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: id})
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue // a frame in another process: its elements are not in the snapshot either
		}
		for _, n := range res.Nodes {
			if n.BackendDOMNodeID != 0 && !n.Ignored {
				ax[n.BackendDOMNodeID] = axOf(n)
			}
		}
	}
	w := &walker{snap: &snap, ax: ax, opts: o.withDefaults(), hash: sha256.New()}
	if vp := metrics.CSSLayoutViewport; vp != nil {
		w.viewport = [4]float64{float64(vp.PageX), float64(vp.PageY), float64(vp.ClientWidth), float64(vp.ClientHeight)}
	}
	top := snap.Documents[0]
	s := &Snapshot{URL: w.str(top.DocumentURL), Title: strings.TrimSpace(w.str(top.Title)), opts: o}
	w.snapshot = s
	w.hash.Write([]byte(s.URL + "\x00"))
	w.document(0, 0, [2]float64{})
	s.Text = w.text.String()
	s.Fingerprint = hex.EncodeToString(w.hash.Sum(nil))[:16]
	return s, nil
}

func axOf(n *accessibility.Node) axInfo {
	var a axInfo
	if n.Role != nil {
		_ = json.Unmarshal(n.Role.Value, &a.role)
	}
	if n.Name != nil {
		_ = json.Unmarshal(n.Name.Value, &a.name)
	}
	for _, p := range n.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		switch p.Name {
		case accessibility.PropertyNameDisabled:
			var b bool
			_ = json.Unmarshal(p.Value.Value, &b)
			a.disabled = b
		case accessibility.PropertyNameChecked:
			var v any
			_ = json.Unmarshal(p.Value.Value, &v)
			a.checked = v == true || v == "true"
		}
	}
	return a
}

// walker turns a DOMSnapshot into elements and text in document order,
// entering frames where their owner element stands.
type walker struct {
	snap       *domsnapshot.CaptureSnapshotResult
	ax         map[cdp.BackendNodeID]axInfo
	opts       SnapshotOptions
	viewport   [4]float64 // x, y, width, height of the top document's viewport
	snapshot   *Snapshot
	text       textBuilder
	hash       hash.Hash
	frames     int
	ariaHidden int // depth inside aria-hidden="true" subtrees
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
	for _, r := range roots {
		w.node(v, r)
	}
}

// skipped elements hold nothing a person reads or uses.
var skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "head": true, "meta": true, "link": true}

func (w *walker) node(v *docView, i int) {
	n := v.d.Nodes
	switch n.NodeType[i] {
	case 3: // text
		if li := v.layout[i]; li >= 0 && li < len(v.d.Layout.Text) {
			t := w.str(v.d.Layout.Text[li])
			w.text.add(t)
			w.hash.Write([]byte(t))
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
	attrs := map[string]string{}
	if i < len(n.Attributes) {
		a := n.Attributes[i]
		for k := 0; k+1 < len(a); k += 2 {
			attrs[strings.ToLower(w.str(domsnapshot.StringIndex(a[k])))] = w.str(domsnapshot.StringIndex(a[k+1]))
		}
	}
	li := v.layout[i]
	display, visibility := "", ""
	if li >= 0 && li < len(v.d.Layout.Styles) {
		st := v.d.Layout.Styles[li]
		if len(st) > 0 {
			display = w.str(domsnapshot.StringIndex(st[0]))
		}
		if len(st) > 1 {
			visibility = w.str(domsnapshot.StringIndex(st[1]))
		}
	}
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

	block := li >= 0 && isBlock(display)
	if block {
		w.text.newline()
	}
	// aria-hidden content is decoration or a duplicate (an image link
	// next to a title link): its text is read, its controls not listed.
	hidden := attrs["aria-hidden"] == "true"
	if hidden {
		w.ariaHidden++
	}
	var el *Element
	weak := false
	if li >= 0 && n.NodeType[i] == 1 && w.ariaHidden == 0 && visibility != "hidden" && visibility != "collapse" {
		var ok bool
		if ok, weak = w.interactive(v, i, tag, attrs); ok {
			el = w.element(v, i, li, tag, attrs)
		}
	}
	start := w.text.len()
	for _, c := range v.children[i] {
		w.node(v, c)
	}
	if di, ok := v.contentDoc[i]; ok {
		w.frames++
		off := v.offset
		if li >= 0 && li < len(v.d.Layout.Bounds) && len(v.d.Layout.Bounds[li]) >= 2 {
			off = [2]float64{v.offset[0] + v.d.Layout.Bounds[li][0], v.offset[1] + v.d.Layout.Bounds[li][1]}
		}
		w.text.newline()
		w.document(di, w.frames, off)
		w.text.newline()
	}
	if hidden {
		w.ariaHidden--
	}
	if el != nil {
		if weak && len(w.snapshot.Elements) > el.Index+1 {
			// A container listening for its children's clicks: the
			// children are what a person uses.
			w.drop(el.Index)
		} else {
			w.finish(el, v, i, tag, attrs, w.text.since(start))
		}
	}
	if block {
		w.text.newline()
	}
	w.hash.Write([]byte("</>"))
}

// drop removes an element and renumbers the ones after it.
func (w *walker) drop(index int) {
	els := w.snapshot.Elements
	els = append(els[:index], els[index+1:]...)
	for i := index; i < len(els); i++ {
		els[i].Index = i
	}
	w.snapshot.Elements = els
}

func isBlock(display string) bool {
	switch display {
	case "", "inline", "inline-block", "inline-flex", "inline-grid", "contents", "none":
		return false
	}
	return true
}

// interactive says whether a person could use the element; weak when
// only a click listener or a tabindex says so, which a container that
// delegates clicks for its children also has.
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
	return v.clickable[i], true
}

// element fills what is known before the element's children are walked.
func (w *walker) element(v *docView, i, li int, tag string, attrs map[string]string) *Element {
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
	if li < len(v.d.Layout.Bounds) && len(v.d.Layout.Bounds[li]) == 4 {
		b := v.d.Layout.Bounds[li]
		x, y := b[0]+v.offset[0], b[1]+v.offset[1]
		e.Visible = b[2] > 0 && b[3] > 0
		vp := w.viewport
		e.Offscreen = vp[2] > 0 && (x+b[2] <= vp[0] || x >= vp[0]+vp[2] || y+b[3] <= vp[1] || y >= vp[1]+vp[3])
	}
	s.Elements = append(s.Elements, e)
	return &s.Elements[len(s.Elements)-1]
}

// finish completes an element once its text is known: a fallback name and
// role, and a select's options.
func (w *walker) finish(e *Element, v *docView, i int, tag string, attrs map[string]string, inner string) {
	// s.Elements may have grown since; e must be re-found by index.
	e = &w.snapshot.Elements[e.Index]
	if tag == "select" {
		var selected string
		w.options(v, i, &e.Options, &selected)
		e.Value = selected
	}
	if e.Name == "" {
		value := attrs["value"]
		if tag == "input" && e.Type == "password" {
			value = "" // a password's value is a secret, never a name
		}
		for _, c := range []string{attrs["aria-label"], attrs["title"], attrs["alt"], attrs["placeholder"], inner, value, attrs["name"]} {
			if c = strings.Join(strings.Fields(c), " "); c != "" {
				e.Name = c
				break
			}
		}
	}
	if e.Role == "" || e.Role == "generic" || e.Role == "none" || e.Role == "StaticText" {
		e.Role = roleOf(tag, e.Type, attrs["role"])
	}
}

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

func (t *textBuilder) len() int { return t.b.Len() }

func (t *textBuilder) since(start int) string { return t.b.String()[start:] }

func (t *textBuilder) String() string { return strings.TrimSpace(t.b.String()) }
