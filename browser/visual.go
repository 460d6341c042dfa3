package browser

import "strings"

// pictureTags paint pixels that no words of the page describe.
var pictureTags = map[string]bool{"img": true, "svg": true, "canvas": true, "video": true, "picture": true, "object": true, "embed": true}

// pictures is the walker's account of the viewport's pictures.
type pictures struct {
	area   float64 // CSS pixels² of the viewport they cover, overlaps counted twice
	inside int     // depth inside a counted picture, whose own parts (an svg's svg, a picture's img) it already covers
}

// measure counts the node's picture, if it is one, by the part of the
// viewport it covers, and reports whether it did. A background image
// counts but the page's own (html, body): a texture behind the text
// would make every page a picture.
func (w *walker) measure(v *docView, i int, tag, visibility string) bool {
	if w.pictures.inside > 0 || visibility == "hidden" || visibility == "collapse" {
		return false
	}
	background := tag != "html" && tag != "body" && strings.Contains(w.style(v, i, 3), "url(")
	if !pictureTags[tag] && !background {
		return false
	}
	b, ok := w.box(v, i)
	if !ok {
		return false
	}
	vp := w.viewport
	a := overlap(b[0], b[0]+b[2], vp[0], vp[0]+vp[2]) * overlap(b[1], b[1]+b[3], vp[1], vp[1]+vp[3])
	if a <= 0 {
		return false // an empty picture may hold one that is not (a picture's img)
	}
	w.pictures.area += a
	w.pictures.inside++
	return true
}

// overlap is the length two intervals share.
func overlap(a0, a1, b0, b1 float64) float64 { return max(0, min(a1, b1)-max(a0, b0)) }

// visual is Snapshot.Visual.
func (w *walker) visual() float64 {
	vp := w.viewport
	if vp[2] <= 0 || vp[3] <= 0 {
		return 0
	}
	return min(1, w.pictures.area/(vp[2]*vp[3]))
}

// unnamed is Snapshot.Unnamed.
func (w *walker) unnamed() int {
	n := 0
	for i, e := range w.snapshot.Elements {
		if i < len(w.infos) && w.infos[i].unnamed && e.Visible && !e.Offscreen && e.Placeholder == "" && e.Value == "" {
			n++
		}
	}
	return n
}
