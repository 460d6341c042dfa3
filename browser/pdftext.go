package browser

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// A PDF is read for its words as a person reads the printed page: each
// run of text where the page puts it, runs of one row joined, rows from
// the top. The reader's own row grouping places every run at the row of
// its text object's origin (runs set with Td all land on one row), so
// the runs are placed here from the content stream's text operators.
//
// A PDF is the page's to write, so reading one is bounded: a file past
// maxPDFBytes is not read, reading stops at a deadline and past a bound
// on the bytes read (a page tree that loops, a stream that inflates
// without end), and a panic of the reader is a page not read.

const (
	// maxPDFBytes: a larger PDF is saved but not read.
	maxPDFBytes = 20 << 20
	// pdfReadTime bounds one reading; the pages read by then are kept.
	pdfReadTime = time.Second
	// maxPDFPages bounds the pages read of one file.
	maxPDFPages = 50
)

// isPDF reports whether data begins as a PDF file does.
func isPDF(head []byte) bool { return len(head) >= 5 && string(head[:5]) == "%PDF-" }

// pdfText is the text of the PDF in r (size bytes), row by row, at most
// limit bytes and cut at a row's end; "" when r holds no PDF the reader
// understands.
func pdfText(r io.ReaderAt, size int64, limit int) (text string) {
	if size <= 0 || size > maxPDFBytes || limit <= 0 {
		return ""
	}
	deadline := time.Now().Add(pdfReadTime)
	src := &boundedReaderAt{r: r, left: 8*size + 1<<20, deadline: deadline}
	var doc *pdf.Reader
	if !protect(func() {
		var err error
		if doc, err = pdf.NewReader(src, size); err != nil {
			doc = nil
		}
	}) || doc == nil {
		return ""
	}
	var b strings.Builder
	pages := 0
	protect(func() { pages = doc.NumPage() })
	for i := 1; i <= min(pages, maxPDFPages) && b.Len() < limit && time.Now().Before(deadline); i++ {
		var rows []string
		if !protect(func() { rows = pageRows(doc.Page(i), limit-b.Len(), deadline) }) {
			break
		}
		for _, row := range rows {
			if b.Len()+len(row)+1 > limit {
				return b.String()
			}
			b.WriteString(row)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// protect runs f, and reports false if it panicked: the reader reports a
// malformed file by panicking.
func protect(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// errPDFBound is what a bounded read returns past its bound.
var errPDFBound = errors.New("past the bound of a PDF's reading")

// boundedReaderAt fails past a number of bytes read or a deadline: what
// a reader in a loop or an endless stream keeps doing.
type boundedReaderAt struct {
	r        io.ReaderAt
	left     int64
	deadline time.Time
}

func (b *boundedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if b.left <= 0 || time.Now().After(b.deadline) {
		return 0, errPDFBound
	}
	b.left -= int64(len(p))
	return b.r.ReadAt(p, off)
}

// textRun is one string a page shows, where it starts, in what size,
// how wide (-1 when its font does not say).
type textRun struct {
	x, y, size, w float64
	text          string
}

// width is how wide the run is: as its font's widths say, else about as
// wide as a sans-serif's letters of each kind are (in ems). Enough to
// tell a run that goes on where the last ended (a word split at a change
// of font or kerning) from one in a column of its own.
func (r textRun) width() float64 {
	if r.w >= 0 {
		return r.w
	}
	w := 0.0
	for _, c := range r.text {
		switch {
		case strings.ContainsRune("iIjlft.,;:'!|() ", c):
			w += 0.28
		case c >= 'A' && c <= 'Z', c == 'm', c == 'w', c == '%', c == '@':
			w += 0.72
		default:
			w += 0.55
		}
	}
	return w * r.size
}

// stopReading ends a page's content stream early, from inside Interpret.
type stopReading struct{}

// pageRows are the rows of text of one page, top first, its runs of a
// row left to right joined by a space. It stops gathering once it holds
// about limit bytes, or at the deadline, and keeps what it has.
func pageRows(pg pdf.Page, limit int, deadline time.Time) []string {
	if pg.V.IsNull() || pg.V.Key("Contents").Kind() == pdf.Null {
		return nil
	}
	t := &textState{page: pg, fonts: map[string]*pdfFont{}, font: &pdfFont{enc: rawEncoding{}}, ctm: identity, tm: identity, tlm: identity, size: 1}
	gathered := 0
	// Ended early (stopReading) or by a malformed operator past the
	// page's first words (the reader panics): the runs so far stand.
	protect(func() {
		ops := 0
		pdf.Interpret(pg.V.Key("Contents"), func(stk *pdf.Stack, op string) {
			if ops++; ops%256 == 0 && time.Now().After(deadline) {
				panic(stopReading{})
			}
			n := t.do(op, popArgs(stk))
			if gathered += n; gathered > 2*limit+256 {
				panic(stopReading{})
			}
		})
	})
	return rowsOf(t.runs)
}

func popArgs(stk *pdf.Stack) []pdf.Value {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	return args
}

// matrix is a PDF transformation [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// times is m applied after n's space: the product m × n.
func (m matrix) times(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// textState follows the operators that place and show text (PDF 32000
// §9.4), and the graphics state's matrix, enough to know where each
// string starts and in what encoding its bytes are.
type textState struct {
	page    pdf.Page
	fonts   map[string]*pdfFont
	font    *pdfFont
	ctm     matrix
	saved   []matrix
	tm, tlm matrix
	leading float64
	size    float64
	runs    []textRun
}

// do applies one operator, and returns the bytes of text it showed.
func (t *textState) do(op string, args []pdf.Value) int {
	num := func(i int) float64 {
		if i < len(args) {
			return args[i].Float64()
		}
		return 0
	}
	switch op {
	case "q":
		if len(t.saved) < 64 {
			t.saved = append(t.saved, t.ctm)
		}
	case "Q":
		if n := len(t.saved); n > 0 {
			t.ctm, t.saved = t.saved[n-1], t.saved[:n-1]
		}
	case "cm":
		if len(args) == 6 {
			t.ctm = matrix{num(0), num(1), num(2), num(3), num(4), num(5)}.times(t.ctm)
		}
	case "BT":
		t.tm, t.tlm = identity, identity
	case "Tf":
		if len(args) == 2 {
			t.setFont(args[0].Name())
			t.size = math.Abs(num(1))
		}
	case "TL":
		t.leading = num(0)
	case "Td":
		t.move(num(0), num(1))
	case "TD":
		t.leading = -num(1)
		t.move(num(0), num(1))
	case "Tm":
		if len(args) == 6 {
			t.tm = matrix{num(0), num(1), num(2), num(3), num(4), num(5)}
			t.tlm = t.tm
		}
	case "T*":
		t.move(0, -t.leading)
	case "'", "\"":
		t.move(0, -t.leading)
		if len(args) > 0 {
			return t.show(args[len(args)-1].RawString())
		}
	case "Tj":
		if len(args) == 1 {
			return t.show(args[0].RawString())
		}
	case "TJ":
		if len(args) == 1 {
			return t.showArray(args[0])
		}
	}
	return 0
}

// setFont makes name the font strings are decoded and measured in.
func (t *textState) setFont(name string) {
	f, ok := t.fonts[name]
	if !ok {
		f = readFont(t.page, name)
		if len(t.fonts) < 256 {
			t.fonts[name] = f
		}
	}
	t.font = f
}

func (t *textState) move(tx, ty float64) {
	t.tlm = matrix{1, 0, 0, 1, tx, ty}.times(t.tlm)
	t.tm = t.tlm
}

// show notes a string shown at the text matrix's origin, and moves
// the matrix past it.
func (t *textState) show(raw string) int {
	n := t.note(t.font.enc.Decode(raw), t.font.advance(raw, t.size))
	return n
}

// showArray notes a TJ array's strings as one run: its numbers move the
// next string back (thousandths of an em), and one that moves it on by
// more than a fifth of an em is a space between words.
func (t *textState) showArray(a pdf.Value) int {
	var b strings.Builder
	w := 0.0
	for i := 0; i < a.Len(); i++ {
		switch v := a.Index(i); v.Kind() {
		case pdf.String:
			b.WriteString(t.font.enc.Decode(v.RawString()))
			w += t.font.advance(v.RawString(), t.size)
		case pdf.Integer, pdf.Real:
			if v.Float64() < -200 {
				b.WriteByte(' ')
			}
			w -= v.Float64() / 1000 * t.size
		}
	}
	return t.note(b.String(), w)
}

// note notes text shown at the text matrix's origin, w wide in text
// space (negative when not known), and moves the matrix past it.
func (t *textState) note(s string, w float64) int {
	at := t.tm.times(t.ctm)
	run := textRun{x: at[4], y: at[5], size: t.size * math.Hypot(at[2], at[3]), text: s, w: -1}
	if w >= 0 {
		run.w = w * math.Hypot(at[0], at[1])
		t.tm = matrix{1, 0, 0, 1, w, 0}.times(t.tm)
	}
	if strings.TrimSpace(s) == "" {
		return 0
	}
	t.runs = append(t.runs, run)
	return len(s)
}

// rawEncoding reads a string's bytes as Latin-1: a font the reader
// cannot decode still shows its ASCII words.
type rawEncoding struct{}

func (rawEncoding) Decode(raw string) string {
	r := make([]rune, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		r = append(r, rune(raw[i]))
	}
	return string(r)
}

// rowsOf groups runs into rows (starts within a third of the text's
// size of each other vertically), top first, each left to right, a
// space between runs apart.
func rowsOf(runs []textRun) []string {
	slices.SortStableFunc(runs, func(a, b textRun) int {
		switch {
		case a.y > b.y:
			return -1
		case a.y < b.y:
			return 1
		}
		return 0
	})
	var rows []string
	for i := 0; i < len(runs); {
		j, tol := i+1, max(runs[i].size/3, 1)
		for j < len(runs) && runs[i].y-runs[j].y <= tol {
			j++
		}
		row := runs[i:j]
		slices.SortStableFunc(row, func(a, b textRun) int {
			switch {
			case a.x < b.x:
				return -1
			case a.x > b.x:
				return 1
			}
			return 0
		})
		var line strings.Builder
		for k, r := range row {
			w := strings.Join(strings.Fields(r.text), " ")
			if w == "" {
				continue
			}
			// A run that begins where the last ends is the same word's.
			if k > 0 && line.Len() > 0 && (r.x-(row[k-1].x+row[k-1].width()) > 0.15*r.size || strings.HasPrefix(r.text, " ") || strings.HasSuffix(row[k-1].text, " ")) {
				line.WriteByte(' ')
			}
			line.WriteString(w)
		}
		if line.Len() > 0 {
			rows = append(rows, line.String())
		}
		i = j
	}
	return rows
}
