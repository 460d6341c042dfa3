package browser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/testsite"
)

func invoicePDF(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testsite.Dir(), "orders", "invoice-7.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readPDF(data []byte, limit int) string {
	return pdfText(bytes.NewReader(data), int64(len(data)), limit)
}

// TestPDFTextReadsRowsAsPrinted: an invoice set cell by cell (each run
// placed on its own) reads as its rows, a row's cells on one line.
func TestPDFTextReadsRowsAsPrinted(t *testing.T) {
	want := "Invoice INV-7\n" +
		"Order 7, placed 2026-11-28 by Ada Lovelace\n" +
		"Oak standing desk x 2 1,780.00 EUR\n" +
		"VAT 25% 445.00 EUR\n" +
		"Total due 2,225.00 EUR\n" +
		"Due by 2026-12-31. Thank you for your order.\n"
	if got := readPDF(invoicePDF(t), 600); got != want {
		t.Errorf("the invoice reads\n%s\nwant\n%s", got, want)
	}
}

// TestPDFTextOfAPrintedPage: a page the browser prints (composite fonts,
// a flipped matrix, words split into runs at each kerning) reads back
// word for word: every word of its rendered text that prints, and none
// glued to or split from its neighbour.
func TestPDFTextOfAPrintedPage(t *testing.T) {
	p, ctx := openAt(t, "/store/index.html")
	printed, err := chromedp.Call(p.tab().ctx, page.PrintToPDF, page.PrintToPDFParams{})
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := p.ExtractPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read := strings.Fields(readPDF(printed.Data, 1<<20))
	words := func(ws []string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	inRead, inRendered := words(read), words(strings.Fields(rendered))
	missed, all := 0, 0
	for _, w := range strings.Fields(rendered) {
		all++
		if !inRead[w] {
			missed++
		}
	}
	// What does not print: a skip link, a drop-down's options.
	if all < 500 || missed*100 > all*2 {
		t.Errorf("%d of the page's %d words are not in the PDF's text", missed, all)
	}
	var strange []string
	for _, w := range read {
		if !inRendered[w] && !strings.Contains(w, "@") && strings.ToLower(w) != w {
			strange = append(strange, w)
		}
	}
	// What prints but is not rendered text: a field's placeholder.
	if len(strange) > 5 {
		t.Errorf("the PDF's text has words the page does not: %q", strange)
	}
}

// TestPDFTextIsBounded: the text stops at a row's end within the limit,
// and a file that is not a PDF, or a broken or looping one, reads as
// little as it can say, without a panic.
func TestPDFTextIsBounded(t *testing.T) {
	data := invoicePDF(t)
	if got := readPDF(data, 60); got != "Invoice INV-7\nOrder 7, placed 2026-11-28 by Ada Lovelace\n" {
		t.Errorf("limited to 60 bytes: %q", got)
	}
	for name, bad := range map[string][]byte{
		"not a PDF":              []byte("Invoice INV-7, total 2,225.00 EUR"),
		"a header alone":         []byte("%PDF-1.7\n"),
		"cut in half":            data[:len(data)/2],
		"no trailer":             data[:len(data)-40],
		"a page tree that loops": loopingPDF(),
	} {
		if got := readPDF(bad, 600); strings.Contains(got, "\x00") || len(got) > 600 {
			t.Errorf("%s: read as %q", name, got)
		}
	}
}

// loopingPDF is a PDF whose page tree holds itself.
func loopingPDF() []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// FuzzPDFText: whatever the bytes, reading them neither panics nor runs
// past its limit.
func FuzzPDFText(f *testing.F) {
	data := invoicePDF(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(loopingPDF())
	f.Add([]byte("%PDF-1.4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got := readPDF(b, 300); len(got) > 300 {
			t.Errorf("read %d bytes past a limit of 300", len(got))
		}
	})
}
