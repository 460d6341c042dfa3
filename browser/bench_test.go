package browser

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/testsite"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// BenchmarkObserve times Observe on each testdata page once it has loaded
// (replayed from testdata/pages, so the network plays no part) and reports
// its elements and blocks next to the page's HTML in tokens: as served,
// and as the DOM stands once scripts have run (what a page's HTML is to an
// agent that sends it whole). What a model reads of it, and its tokens,
// headroom bench pageview measures.
//
//	go test -run '^$' -bench Observe ./browser
func BenchmarkObserve(b *testing.B) {
	pages := []struct {
		name, har string
		steps     int // of the site's steps file, taken before observing
	}{
		{"shop-home", "shop", 0},
		{"shop-results", "shop", 3},
		{"shop-product", "shop", 5},
		{"form", "form", 0},
		{"form-errors", "form", 3},
		{"feed", "feed", 2},
		{"catalogue", "catalogue", 0},
		{"catalogue-filtered", "catalogue", 1},
		{"store", "store", 0},
		{"store-filtered", "store", 1},
	}
	for _, pg := range pages {
		b.Run(pg.name, func(b *testing.B) {
			a, err := replay.Load(filepath.Join(testsite.Dir(), pg.har+".har"))
			if err != nil {
				b.Fatal(err)
			}
			m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
			p := open(b, Options{Replay: m})
			ctx := ctxT(b)
			if _, err := p.Walk(ctx, StartURL(a), Actions(steps(b, pg.har)[:pg.steps], b.TempDir())...); err != nil {
				b.Fatal(err)
			}
			html, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
			if err != nil {
				b.Fatal(err)
			}
			url, _ := p.URL(ctx)
			served := ""
			for _, e := range a.Log.Entries {
				if e.Request.URL == url && e.Response.Status == 200 {
					served = string(e.Response.Content.Text)
				}
			}
			var snap *Snapshot
			b.ResetTimer()
			for b.Loop() {
				if snap, err = p.Observe(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(tokens.Count(served)), "served-html-tokens")
			b.ReportMetric(float64(tokens.Count(html)), "html-tokens")
			b.ReportMetric(float64(len(snap.Elements)), "elements")
			b.ReportMetric(float64(len(snap.Blocks)), "blocks")
		})
	}
}

// BenchmarkType times typing into the form's text field and, with a
// secret, into its password field: the field found in the browser's frame
// tree, and the text put into it in one task of the page (the secret set
// as its value), whatever the page does with the focus.
//
//	go test -run '^$' -bench Type ./browser
func BenchmarkType(b *testing.B) {
	a, err := replay.Load(filepath.Join(testsite.Dir(), "form.har"))
	if err != nil {
		b.Fatal(err)
	}
	m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	p := open(b, Options{Replay: m, Secrets: []Secret{{Name: "pw", Value: "bench-secret-4471", Domains: []string{"127.0.0.1"}}}, AllowedDomains: []string{"127.0.0.1"}})
	ctx := ctxT(b)
	if _, err := p.Navigate(ctx, StartURL(a)); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, field, text string
	}{{"text", "#name", "Grace Hopper"}, {"secret", "#password", Placeholder("pw")}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Type(ctx, CSS(c.field), c.text, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDialogClick times a click that opens a confirm against the
// same click on the same page with no question: a dialog is answered as
// it opens, so it adds no more than its own round trip to the action.
//
//	go test -run '^$' -bench DialogClick ./browser
func BenchmarkDialogClick(b *testing.B) {
	s := site(b)
	for _, pg := range []struct{ name, query string }{{"plain", "?id=7&ask=no"}, {"confirm", "?id=7"}} {
		b.Run(pg.name, func(b *testing.B) {
			p := open(b, Options{AllowedDomains: []string{"127.0.0.1"}, Logf: func(string, ...any) {}})
			ctx := ctxT(b)
			for b.Loop() {
				b.StopTimer()
				if _, err := p.Navigate(ctx, s.URL+"/orders/order.html"+pg.query); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				out, err := p.Click(ctx, CSS("#delete"))
				if err != nil || out.Effect != Changed {
					b.Fatalf("click: %v, %v", out, err)
				}
			}
		})
	}
}
