package browser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// line finds the element whose rendered line contains all of parts.
func line(t *testing.T, s *Snapshot, parts ...string) Element {
	t.Helper()
	for _, e := range s.Elements {
		l := e.Line(80)
		ok := true
		for _, p := range parts {
			if !strings.Contains(l, p) {
				ok = false
				break
			}
		}
		if ok {
			return e
		}
	}
	t.Fatalf("no element with %q in\n%s", parts, s)
	return Element{}
}

func TestSnapshotOfTheShop(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, s.URL+"/shop/index.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Title != "Oak & Iron — furniture" || !strings.HasSuffix(snap.URL, "/shop/") {
		t.Errorf("title %q url %q", snap.Title, snap.URL)
	}
	q := line(t, snap, `searchbox "Search the catalogue"`, `placeholder="Search products"`, "type=search")
	if q.Offscreen || !q.Visible || q.BackendID == 0 {
		t.Errorf("search box: %+v", q)
	}
	line(t, snap, `button "Checkout"`, "disabled")
	line(t, snap, `link "Partners"`, "href=http://elsewhere.test/partners")
	line(t, snap, `link "Desks"`, "href=/shop/results.html?q=desk")
	line(t, snap, `button "Cart (0)"`)                                // inside an open shadow root
	line(t, snap, `textbox "Email address"`, "type=email", "frame=1") // inside a same-origin iframe
	line(t, snap, `button "Subscribe"`, "frame=1")
	line(t, snap, `button "Load reviews"`, "offscreen")
	for i, e := range snap.Elements {
		if e.Index != i {
			t.Errorf("element %d has index %d", i, e.Index)
		}
	}
	if !strings.Contains(snap.Text, "Free delivery on orders over 500 EUR.") || !strings.Contains(snap.Text, "Our monthly letter") {
		t.Errorf("text misses the page or its frame:\n%s", snap.Text)
	}
	if strings.Contains(snap.Text, "customElements") {
		t.Error("script text leaked into the snapshot")
	}
	again, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Fingerprint != snap.Fingerprint || again.String() != snap.String() {
		t.Error("two snapshots of an unchanged page differ")
	}
}

func TestSnapshotOfTheForm(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, s.URL+"/form/index.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Type(ctx, CSS("#password"), "hunter22", false); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	line(t, snap, `textbox "Full name"`, "type=text")
	line(t, snap, `combobox "Country"`, `value="Choose one"`, `"Norway"`, `"Japan"`)
	line(t, snap, `radio "Free"`, "checked")
	line(t, snap, `checkbox "I accept the terms"`)
	line(t, snap, `button "Create account"`, "disabled")
	line(t, snap, `textbox "About you"`, "<textarea")
	pw := line(t, snap, `textbox "Password"`)
	if strings.Contains(snap.String(), "hunter22") || pw.Value != "••••" {
		t.Errorf("a password reached the snapshot: %+v", pw)
	}
}

func TestSnapshotSeesContentLoadedAfterLoad(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, s.URL+"/feed/index.html"); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sam: Warehouse closed on Friday.", "12 members, 3 online"} {
		if !strings.Contains(snap.Text, want) {
			t.Errorf("text lacks %q (fetched after load):\n%s", want, snap.Text)
		}
	}
}

func TestAPasswordIsNeverAName(t *testing.T) {
	t.Parallel()
	p := open(t, Options{})
	ctx := ctxT(t)
	page := `<form><input type=password value="canary-pw-7781"><input type=password id=p2 value="canary-pw-7782" placeholder="Your password"></form>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	if _, err := p.Navigate(ctx, srv.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.String(), "canary-pw") || strings.Contains(snap.Text, "canary-pw") {
		t.Fatalf("a password reached the snapshot:\n%s", snap)
	}
	for _, e := range snap.Elements {
		if e.Type == "password" && (strings.Contains(e.Name, "canary") || e.Value != "••••") {
			t.Errorf("password field: %+v", e)
		}
	}
	line(t, snap, `textbox "Your password"`, "type=password")
}
