package browser

import (
	"github.com/ledongthuc/pdf"
)

// pdfFont is what reading a PDF's text needs of one of its fonts: how
// its bytes decode into words, and how wide its glyphs are (PDF 32000
// §9.2.4: thousandths of an em), so that a run's end is known and a word
// the page split into two runs reads as one.
type pdfFont struct {
	enc pdf.TextEncoding
	// wide is each code's width; nil when the font gives none (the
	// standard fonts need not).
	wide    map[int]float64
	missing float64 // the width of a code wide does not list
	twoByte bool    // codes are two bytes (a composite font on Identity-H/V)
}

// maxFontWidths bounds the widths read of one font.
const maxFontWidths = 1 << 16

// readFont reads the page's font of that name; a font that cannot be
// read decodes bytes as Latin-1 and has no widths.
func readFont(pg pdf.Page, name string) *pdfFont {
	f := &pdfFont{enc: rawEncoding{}}
	protect(func() {
		font := pg.Font(name)
		v := font.V
		if v.Key("Subtype").Name() == "Type0" {
			enc := v.Key("Encoding").Name()
			f.twoByte = enc == "Identity-H" || enc == "Identity-V"
			f.wide, f.missing = cidWidths(v.Key("DescendantFonts").Index(0))
		} else if w := v.Key("Widths"); w.Kind() == pdf.Array {
			first := int(v.Key("FirstChar").Int64())
			f.wide = map[int]float64{}
			for i := 0; i < min(w.Len(), maxFontWidths); i++ {
				f.wide[first+i] = w.Index(i).Float64()
			}
		}
		f.enc = font.Encoder()
	})
	return f
}

// cidWidths reads a composite font's W array: `c [w1 w2 ...]` gives
// codes from c on their widths, `c1 c2 w` gives codes c1 to c2 one width;
// DW is the width of the rest.
func cidWidths(desc pdf.Value) (map[int]float64, float64) {
	missing := 1000.0
	if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		missing = dw.Float64()
	}
	wide := map[int]float64{}
	w := desc.Key("W")
	for i := 0; i+1 < w.Len() && len(wide) < maxFontWidths; {
		c := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && len(wide) < maxFontWidths; j++ {
				wide[c+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= w.Len() {
			break
		}
		last, width := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		for code := c; code <= last && len(wide) < maxFontWidths; code++ {
			wide[code] = width
		}
		i += 3
	}
	return wide, missing
}

// advance is how far a string in this font moves the text, in text
// space units at size; -1 when the font does not say.
func (f *pdfFont) advance(raw string, size float64) float64 {
	if f.wide == nil {
		return -1
	}
	step := 1
	if f.twoByte {
		step = 2
	}
	total := 0.0
	for i := 0; i+step <= len(raw); i += step {
		code := int(raw[i])
		if step == 2 {
			code = code<<8 | int(raw[i+1])
		}
		w, ok := f.wide[code]
		if !ok {
			w = f.missing
		}
		total += w
	}
	return total / 1000 * size
}
