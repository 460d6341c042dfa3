package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// An opened PDF: the browser shows it in its viewer, whose document holds
// none of the file's words. A snapshot of such a tab reads the file
// itself: the tab fetches its own address again (from its cache when it
// can, through the fence as any request goes, so a replay answers it
// too) and the file's rows become the page's lines. A PDF a form's POST
// answered cannot be fetched again; its tab reads as empty, as before.

// maxPDFViewText bounds what of an opened PDF the snapshot reads: the
// page view folds what is past its own bounds.
const maxPDFViewText = 16 << 10

// pdfMime is what a PDF is served as.
const pdfMime = "application/pdf"

// openedPDF is what the tab's PDF says, and the address it was read at,
// so that a tab's snapshots read the file once.
type openedPDF struct {
	url, text string
}

// showsPDF reports whether the current tab shows a PDF in its viewer.
func (p *Page) showsPDF() bool { return p.tab().net.documentType() == pdfMime }

// pdfOnTab is the text of the PDF the tab at url shows, read once.
func (p *Page) pdfOnTab(ctx context.Context, url string) string {
	t := p.tab()
	if read := t.pdf.Load(); read != nil && read.url == url {
		return read.text
	}
	data, err := fetchOwnDocument(ctx, maxPDFBytes)
	text := ""
	if err == nil && isPDF(data) {
		text = pdfText(bytes.NewReader(data), int64(len(data)), maxPDFViewText)
	}
	t.pdf.Store(&openedPDF{url: url, text: text})
	return text
}

// fetchOwnDocument is the bytes of the tab's document as its address
// serves them, at most limit bytes.
func fetchOwnDocument(ctx context.Context, limit int) ([]byte, error) {
	js := fmt.Sprintf(`(async () => {
  const r = await fetch(location.href, {cache: 'force-cache', credentials: 'include'});
  if (!r.ok || +(r.headers.get('content-length') || 0) > %[1]d) return '';
  const b = new Uint8Array(await r.arrayBuffer());
  if (b.length > %[1]d) return '';
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  return btoa(s);
})()`, limit)
	b64, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(b64)
}

// addPDFLines makes the rows of the PDF the tab shows the snapshot's
// lines and text.
func (p *Page) addPDFLines(ctx context.Context, s *Snapshot) {
	text := p.pdfOnTab(ctx, s.URL)
	for _, row := range strings.Split(strings.TrimSpace(text), "\n") {
		if row != "" {
			s.Blocks = append(s.Blocks, Block{Text: row, Element: -1})
		}
	}
	s.Text = strings.TrimSpace(s.Text + "\n" + text)
}
