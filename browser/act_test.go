package browser

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func mustAct(t *testing.T, want Effect) func(Outcome, error) Outcome {
	t.Helper()
	return func(o Outcome, err error) Outcome {
		t.Helper()
		if err != nil {
			t.Fatalf("want %s, got error %v", want, err)
		}
		if o.Effect != want {
			t.Fatalf("outcome %v, want %s", o, want)
		}
		return o
	}
}

func wantErr(t *testing.T, kind error) func(Outcome, error) {
	t.Helper()
	return func(o Outcome, err error) {
		t.Helper()
		if !errors.Is(err, kind) {
			t.Fatalf("got %v, %v; want an error of kind %v", o, err, kind)
		}
		t.Logf("as expected: %v", err)
	}
}

func observe(t *testing.T, p *Page) *Snapshot {
	t.Helper()
	s, err := p.Observe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestActionsOnTheShop(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	snap := observe(t, p)

	// A button that rewrites itself changes the DOM; one with no handler does nothing.
	mustAct(t, Changed)(p.Click(ctx, snap.Index(line(t, snap, `"Show promo code"`).Index)))
	mustAct(t, Nothing)(p.Click(ctx, snap.Index(line(t, snap, `"Does nothing"`).Index)))
	wantErr(t, ErrDisabled)(p.Click(ctx, snap.Index(line(t, snap, `"Checkout"`).Index)))
	// In a shadow root and in a frame.
	mustAct(t, Changed)(p.Click(ctx, snap.Index(line(t, snap, `"Cart (0)"`).Index)))
	mustAct(t, Changed)(p.Click(ctx, snap.Index(line(t, snap, `"Subscribe"`).Index)))
	// Offscreen: scrolled into view and clicked.
	mustAct(t, Changed)(p.Click(ctx, snap.Index(line(t, snap, `"Load reviews"`).Index)))
	if got, _ := p.Extract(ctx, CSS("#rv")); got != "4.8 out of 5 from 212 reviews" {
		t.Errorf("reviews = %q", got)
	}
	mustAct(t, Changed)(p.Scroll(ctx, "up"))
	for i := 0; ; i++ { // until the top, where scrolling up does nothing
		o, err := p.Scroll(ctx, "up")
		if err != nil || i > 4 {
			t.Fatalf("scrolling up never reached the top: %v %v", o, err)
		}
		if o.Effect == Nothing {
			break
		}
	}
	mustAct(t, Changed)(p.ScrollTo(ctx, CSS("#reviews")))

	// Type and submit: a navigation to the results, which load by fetch.
	snap = observe(t, p)
	out := mustAct(t, Navigated)(p.Type(ctx, snap.Index(line(t, snap, `searchbox`).Index), "oak", true))
	if !strings.Contains(out.URL, "results.html?q=oak") {
		t.Errorf("submitted to %s", out.URL)
	}
	wantErr(t, ErrIndexGone)(p.Click(ctx, snap.Index(0))) // from the old page's snapshot
	snap = observe(t, p)
	if !strings.Contains(snap.Text, `2 results for "oak"`) {
		t.Errorf("results not loaded:\n%s", snap.Text)
	}
	wantErr(t, ErrIndexGone)(p.Click(ctx, snap.Index(len(snap.Elements))))
	sort := line(t, snap, `combobox "Sort by"`).Index
	mustAct(t, Changed)(p.Select(ctx, snap.Index(sort), "price, high to low"))
	mustAct(t, Nothing)(p.Select(ctx, snap.Index(sort), "price-desc")) // already chosen
	wantErr(t, ErrNoOption)(p.Select(ctx, snap.Index(sort), "alphabetical"))
	wantErr(t, ErrNotInput)(p.Select(ctx, CSS("#q"), "x"))
	wantErr(t, ErrNotInput)(p.Type(ctx, CSS("select"), "x", false))
	snap = observe(t, p)
	first := line(t, snap, `link "Oak dining table"`)
	if first.Index != line(t, snap, "link", "item.html").Index {
		t.Errorf("sorting by price should put the dining table first:\n%s", snap)
	}

	// The product page: a cookie wall covers the button until accepted.
	mustAct(t, Navigated)(p.Click(ctx, snap.Index(first.Index)))
	snap = observe(t, p)
	add := line(t, snap, `"Add to cart"`).Index
	wantErr(t, ErrCovered)(p.Click(ctx, snap.Index(add)))
	mustAct(t, Changed)(p.Click(ctx, snap.Index(line(t, snap, `"Accept"`).Index)))
	mustAct(t, Changed)(p.Select(ctx, snap.Index(line(t, snap, `"Quantity"`).Index), "2"))
	mustAct(t, Changed)(p.Click(ctx, snap.Index(add)))
	if got, _ := p.Extract(ctx, CSS("#cart")); got != "2 in your cart" {
		t.Errorf("cart = %q", got)
	}

	out = mustAct(t, Navigated)(p.Back(ctx))
	if !strings.Contains(out.URL, "results.html") {
		t.Errorf("back went to %s", out.URL)
	}
	mustAct(t, Navigated)(p.Navigate(ctx, "index.html")) // relative to the page
	page, err := p.ExtractPage(ctx)
	if err != nil || !strings.Contains(page, "Furniture that lasts") {
		t.Errorf("page text %q, %v", page, err)
	}
}

func TestTypingAndKeysOnTheForm(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/form/index.html"))
	mustAct(t, Changed)(p.Type(ctx, CSS("#name"), "Grace", false))
	mustAct(t, Changed)(p.Type(ctx, CSS("#name"), "Grace Hopper", false)) // replaces, does not append
	if v, _ := p.Extract(ctx, CSS("#name")); v != "Grace Hopper" {
		t.Errorf("name = %q", v)
	}
	mustAct(t, Changed)(p.Type(ctx, CSS("#name"), "", false))
	if v, _ := p.Extract(ctx, CSS("#name")); v != "" {
		t.Errorf("name after clearing = %q", v)
	}
	mustAct(t, Changed)(p.Type(ctx, CSS("#bio"), "Line one", false))
	wantErr(t, ErrNotInput)(p.Type(ctx, CSS("#terms"), "x", false))
	wantErr(t, ErrDisabled)(p.Click(ctx, CSS("#submit")))
	mustAct(t, Changed)(p.Click(ctx, XPath("//label[contains(., 'accept the terms')]"))) // a label toggles its box
	// Validation errors, then a good submission by Enter in a field.
	mustAct(t, Changed)(p.Click(ctx, CSS("#submit")))
	if v, _ := p.Extract(ctx, CSS("#errors")); !strings.Contains(v, "Full name is required.") {
		t.Errorf("validation errors = %q", v)
	}
	p.Type(ctx, CSS("#name"), "Grace Hopper", false)
	p.Type(ctx, CSS("#email"), "grace@example.com", false)
	p.Type(ctx, CSS("#password"), "cobol-1959", false)
	mustAct(t, Changed)(p.Select(ctx, CSS("#country"), "Japan"))
	mustAct(t, Changed)(p.Click(ctx, CSS("input[value=pro]")))
	mustAct(t, Nothing)(p.Press(ctx, "Tab"))
	out := mustAct(t, Navigated)(p.Type(ctx, CSS("#email"), "grace@example.com", true))
	if !strings.Contains(out.URL, "welcome.html") {
		t.Fatalf("after submit: %s", out.URL)
	}
	if v, _ := p.Extract(ctx, CSS("#hello")); v != "Welcome, Grace Hopper (pro plan)" {
		t.Errorf("welcome = %q", v)
	}
	wantErr(t, ErrNotFound)(p.Press(ctx, "Hyper"))
	wantErr(t, ErrNotFound)(p.Click(ctx, CSS("#nope")))
	wantErr(t, ErrNotFound)(p.Click(ctx, CSS("##bad")))
	wantErr(t, ErrNotFound)(p.Click(ctx, XPath("//*[")))
}

func TestNavigationOffTheAllowedDomainsIsBlocked(t *testing.T) {
	t.Parallel()
	s := site(t)
	var logged []string
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Logf: func(f string, a ...any) { logged = append(logged, f) }})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	snap := observe(t, p)
	wantErr(t, ErrBlocked)(p.Click(ctx, snap.Index(line(t, snap, `"Partners"`).Index)))
	_, err := p.Navigate(ctx, "http://user:pw@elsewhere.test/?api-key=SECRETKEY")
	if !errors.Is(err, ErrBlocked) || strings.Contains(err.Error(), "SECRETKEY") || strings.Contains(err.Error(), "pw@") {
		t.Errorf("blocked navigation: %v", err)
	}
	// localhost is the same machine but not an allowed name.
	wantErr(t, ErrBlocked)(p.Navigate(ctx, strings.Replace(s.URL, "127.0.0.1", "localhost", 1)+"/shop/index.html"))
	if u, _ := p.URL(ctx); !strings.HasPrefix(u, s.URL+"/shop/") {
		t.Errorf("after blocked navigations the page is at %s", u)
	}
	if len(p.Blocked()) < 2 {
		t.Errorf("blocked = %v", p.Blocked())
	}
	// The page still works.
	mustAct(t, Changed)(p.Click(ctx, CSS("#promo")))
}

func TestWaitsAreBounded(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/shop/index.html"))
	if _, err := p.Type(ctx, CSS("#q"), "x", false); err != nil {
		t.Fatal(err)
	}
	for _, w := range []WaitFor{WaitLoad, WaitNetworkQuiet, WaitDOMStable} {
		if err := p.Wait(ctx, w, 5*time.Second); err != nil {
			t.Errorf("wait %s on a quiet page: %v", w, err)
		}
	}
	// A clock that rewrites the page every 20 ms, and a request that never ends.
	if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[bool](`
		setInterval(() => { document.getElementById('rv').textContent = String(performance.now()); }, 20);
		fetch('/slow'); true`)); err != nil {
		t.Fatal(err)
	}
	for _, w := range []WaitFor{WaitNetworkQuiet, WaitDOMStable} {
		start := time.Now()
		err := p.Wait(ctx, w, time.Second)
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("wait %s on a busy page: %v, want ErrTimeout", w, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("wait %s took %s with a 1s bound", w, d)
		}
	}
	if err := p.Wait(ctx, "forever", time.Second); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown condition: %v", err)
	}
}
