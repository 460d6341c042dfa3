package browser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/headroom-agent/headroom/internal/testsite"
)

// TestAnOpenedPDFIsReadAsThePage: a link to a PDF opens it in the
// browser's viewer, whose document holds none of its words; the
// snapshot's lines and the page's text are the file's rows, secrets
// shown by name, and the file is fetched once for the tab's snapshots;
// back on the page before, the page is read again.
func TestAnOpenedPDFIsReadAsThePage(t *testing.T) {
	var fetched atomic.Int64
	site := testsite.Handler()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".pdf") {
			fetched.Add(1)
		}
		site.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	ctx := ctxT(t)
	p := open(t, Options{
		AllowedDomains: []string{"127.0.0.1"},
		// A value no other test of the package shows: a secret is hidden
		// process-wide once a page is given it.
		Secrets: []Secret{{Name: "order-date", Value: "2026-11-28", Domains: []string{"127.0.0.1"}}},
	})
	if _, err := p.Navigate(ctx, s.URL+"/orders/invoices.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Click(ctx, CSS(`a[href="invoice-7.pdf"]`)); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, b := range snap.Blocks {
		lines = append(lines, b.Text)
	}
	want := []string{"Invoice INV-7", "Order 7, placed <secret:order-date> by Ada Lovelace", "Oak standing desk x 2 1,780.00 EUR", "VAT 25% 445.00 EUR", "Total due 2,225.00 EUR", "Due by 2026-12-31. Thank you for your order."}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the PDF's tab reads\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	text, err := p.ExtractPage(ctx)
	if err != nil || !strings.Contains(text, "Total due 2,225.00 EUR") || strings.Contains(text, "2026-11-28") {
		t.Errorf("the page's text is %q (%v)", text, err)
	}
	before := fetched.Load()
	if _, err := p.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	if after := fetched.Load(); after != before {
		t.Errorf("another snapshot of the tab fetched the PDF again (%d requests, then %d)", before, after)
	}
	// Back on the page of links, the page reads as itself again.
	if _, err := p.Back(ctx); err != nil {
		t.Fatal(err)
	}
	back, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(back.Text, "Each invoice opens as a PDF") || strings.Contains(back.Text, "Total due") {
		t.Errorf("back on the list, the page reads %q", back.Text)
	}
}
