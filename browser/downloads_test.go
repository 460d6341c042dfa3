package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/testsite"
)

// TestDownloadsAreSavedUnderTheirNamesWithinABound: a download lands in
// the run's folder under the name the page gave it (another beside it
// when the name is taken), and is told of in the click's outcome; with
// no folder it is refused, and past the bound it is cancelled and
// nothing of it stays.
func TestDownloadsAreSavedUnderTheirNamesWithinABound(t *testing.T) {
	s := site(t)
	ctx := ctxT(t)
	want, err := os.ReadFile(filepath.Join(testsite.Dir(), "orders", "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	download := func(t *testing.T, o Options) Outcome {
		t.Helper()
		o.AllowedDomains = []string{"127.0.0.1"}
		p := open(t, o)
		if _, err := p.Navigate(ctx, s.URL+"/orders/reports.html"); err != nil {
			t.Fatal(err)
		}
		out, err := p.Click(ctx, CSS("a[download]"))
		if err != nil {
			t.Fatalf("the download's click: %v", err)
		}
		if len(out.Downloads) != 1 {
			t.Fatalf("the click's outcome tells %d downloads (%s), want 1", len(out.Downloads), out)
		}
		return out
	}
	t.Run("saved", func(t *testing.T) {
		dir := t.TempDir()
		o := Options{DownloadDir: dir, AllowedDomains: []string{"127.0.0.1"}}
		p := open(t, o)
		if _, err := p.Navigate(ctx, s.URL+"/orders/reports.html"); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"orders-report.csv", "orders-report (2).csv"} {
			out, err := p.Click(ctx, CSS("a[download]"))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Downloads) != 1 || !out.Downloads[0].Saved || out.Downloads[0].Name != name {
				t.Fatalf("the click's outcome is %q, want %s saved", out, name)
			}
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != string(want) {
				t.Errorf("%s holds %q (%v), want the report", name, got, err)
			}
			if !strings.Contains(out.String(), `downloaded "`+name+`" (`) {
				t.Errorf("the outcome says %q", out)
			}
			snap, err := p.Observe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Downloads) != 1 || snap.Downloads[0].Name != name || snap.Downloads[0].Text != string(want) {
				t.Errorf("the next snapshot tells of %+v, want %s and its text", snap.Downloads, name)
			}
		}
		if files, _ := os.ReadDir(dir); len(files) != 2 {
			t.Errorf("the folder holds %d files, want the 2 downloads", len(files))
		}
		if got := p.Downloads(); len(got) != 2 {
			t.Errorf("Downloads lists %d, want 2", len(got))
		}
	})
	t.Run("a folder of its own", func(t *testing.T) {
		p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
		if _, err := p.Navigate(ctx, s.URL+"/orders/reports.html"); err != nil {
			t.Fatal(err)
		}
		out, err := p.Click(ctx, CSS("a[download]"))
		if err != nil || len(out.Downloads) != 1 || !out.Downloads[0].Saved {
			t.Fatalf("with no folder given: %s, %v", out, err)
		}
		dir := p.opts.DownloadDir
		if got, err := os.ReadFile(filepath.Join(dir, out.Downloads[0].Name)); err != nil || string(got) != string(want) {
			t.Errorf("the download holds %q (%v)", got, err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the Page's own downloads folder outlives it: %v", err)
		}
	})
	t.Run("a PDF", func(t *testing.T) {
		p := open(t, Options{DownloadDir: t.TempDir(), AllowedDomains: []string{"127.0.0.1"}})
		if _, err := p.Navigate(ctx, s.URL+"/orders/invoices.html"); err != nil {
			t.Fatal(err)
		}
		// The invoice's link opens it; as a download it is saved and read.
		if _, err := chromedp.Run(p.tab().ctx, chromedp.Evaluate[bool](`document.querySelector('a[href="invoice-7.pdf"]').setAttribute('download', 'INV-7.pdf'), true`)); err != nil {
			t.Fatal(err)
		}
		out, err := p.Click(ctx, CSS(`a[href="invoice-7.pdf"]`))
		if err != nil || len(out.Downloads) != 1 || !out.Downloads[0].Saved {
			t.Fatalf("the PDF's download: %s, %v", out, err)
		}
		snap, err := p.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Downloads) != 1 || !strings.Contains(snap.Downloads[0].Text, "Total due 2,225.00 EUR\n") {
			t.Errorf("the next snapshot tells of %+v, want the invoice's rows", snap.Downloads)
		}
	})
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		out := download(t, Options{DownloadDir: dir, MaxDownloadBytes: 20})
		if d := out.Downloads[0]; d.Saved || !strings.Contains(d.Detail, "larger than the bound of 20 bytes") {
			t.Errorf("past the bound: %+v", d)
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("a download past the bound left %d files", len(files))
		}
	})
}

func TestSafeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.csv":             "report.csv",
		"../../etc/passwd":       "passwd",
		`C:\temp\x.pdf`:          "x.pdf",
		".bashrc":                "bashrc",
		"a\x00b\u202ec.txt":      "a_b_c.txt",
		"":                       "download",
		"..":                     "download",
		`what?<>"|*:.txt`:        "what_______.txt",
		strings.Repeat("x", 300): strings.Repeat("x", 100),
	} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
