package browser

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// readingPage is a page a person reads without trouble and a naive
// snapshot gets wrong: fields labelled only by the words beside them,
// a mail list of unnamed icons and rows that a click handler opens, a
// grid that passes its buttons' clicks on, a table.
const readingPage = `<!doctype html><html><head><title>Inbox</title><style>
.row { cursor: pointer; display: flex; gap: 8px } .icon { display: inline-block; width: 16px; height: 16px; background: #ccc }
</style></head><body>
<h1>Sign in</h1>
<form>
<p>Username</p><input id="user">
<span>Password</span> <input type="password" id="pw">
<div>Coupon code</div><input id="coupon" placeholder="e.g. SAVE10">
<input type="checkbox" id="remember"> Remember me
<button type="button">Sign in</button>
</form>
<h2>Inbox</h2>
<div class="mail">
<div class="row" onclick="open(1)"><span class="icon icon-star" onclick="star(1)"></span><b>Ada</b> Meeting moved to Friday <span class="icon icon-trash" onclick="bin(1)"></span></div>
<div class="row" onclick="open(2)"><span class="icon icon-star" onclick="star(2)"></span><b>Lin</b> Invoice 1042 attached <span class="icon icon-trash" onclick="bin(2)"></span></div>
</div>
<button type="button"><svg width="16" height="16"><use href="#icon-reply"/></svg></button>
<ul id="grid" onclick="add(event)">
<li class="card"><h3>Oak desk</h3><p>640 EUR</p><button type="button">Add to cart</button></li>
<li class="card"><h3>Ash desk</h3><p>520 EUR</p><button type="button">Add to cart</button></li>
<li class="card"><h3>Elm desk</h3><p>480 EUR</p><button type="button">Add to cart</button></li>
</ul>
<table><tr><th>Invoice</th><th>Date</th><th>Total</th></tr><tr><td>1042</td><td>2026-11-03</td><td>330 EUR</td></tr></table>
<script>function open(){} function star(){} function bin(){} function add(){}</script>
</body></html>`

func servePage(t *testing.T, html string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(html))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestSnapshotReadsAsAPersonReads(t *testing.T) {
	t.Parallel()
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, servePage(t, readingPage)); err != nil {
		t.Fatal(err)
	}
	snap := observe(t, p)
	t.Logf("\n%s", snap)

	// Fields named by the words a person reads beside them; the words
	// themselves are not read twice.
	line(t, snap, `textbox "Username"`)
	line(t, snap, `textbox "Password"`, "type=password")
	line(t, snap, `textbox "Coupon code"`, `placeholder="e.g. SAVE10"`)
	line(t, snap, `checkbox "Remember me"`)
	for _, b := range snap.Blocks {
		if b.Element < 0 && (b.Text == "Username" || b.Text == "Remember me") {
			t.Errorf("the label %q is read as words too", b.Text)
		}
	}
	// Icons by their author's words; rows a handler opens by their words.
	if n := strings.Count(snap.String(), `"star"`); n != 2 {
		t.Errorf("%d star icons named, want 2", n)
	}
	line(t, snap, `"trash"`)
	line(t, snap, `button "reply"`)
	row := line(t, snap, `"Ada Meeting moved to Friday"`)
	if row.Role != "clickable" {
		t.Errorf("the mail row is a %s", row.Role)
	}
	// A list that passes its buttons' clicks on is not an element; its
	// words stay, each card's price before its button.
	for _, e := range snap.Elements {
		if strings.Contains(e.Name, "Oak desk") && e.Role == "clickable" {
			t.Errorf("the grid is an element: %s", e.Line(80))
		}
	}
	order := []string{}
	for _, b := range snap.Blocks {
		if b.Element >= 0 {
			order = append(order, snap.Elements[b.Element].Name)
		} else {
			order = append(order, b.Text)
		}
	}
	text := strings.Join(order, "|")
	if !strings.Contains(text, "Oak desk|640 EUR|Add to cart|Ash desk") {
		t.Errorf("the cards do not read in order: %s", text)
	}
	if !strings.Contains(text, "Invoice | Date | Total") || !strings.Contains(text, "1042 | 2026-11-03 | 330 EUR") {
		t.Errorf("a table's row is not one line: %s", text)
	}
	// The cards are items of one list; a heading knows its level.
	cards := map[int]bool{}
	for _, b := range snap.Blocks {
		if b.Element < 0 && strings.HasSuffix(b.Text, " desk") {
			if b.Heading != 3 || b.List == 0 {
				t.Errorf("card title %q: heading %d, list %d", b.Text, b.Heading, b.List)
			}
			cards[b.Item] = true
		}
		if b.Text == "Sign in" && b.Element < 0 && b.Heading != 1 {
			t.Errorf("the page's title is heading %d", b.Heading)
		}
	}
	if len(cards) != 3 {
		t.Errorf("%d card items, want 3", len(cards))
	}
}
