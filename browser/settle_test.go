package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// settleSite is a page whose buttons do each thing an action can set
// going: navigate (at once or from a 200 ms timer), fetch (once, or a
// fetch whose answer starts another), change the DOM (in the handler, in
// the next frame, from a 150 ms timer), debounce what is typed, or
// nothing at all.
func settleSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><h1>Start</h1><p id="out">nothing yet</p><p id="sug"></p>
<a id="link" href="/next">a link</a>
<button id="later" onclick="setTimeout(() => { location.href = '/next'; }, 200)">navigate later</button>
<button id="menu" onclick="setTimeout(() => { out.textContent = 'the menu opened'; }, 150)">open the menu</button>
<button id="fetch" onclick="fetch('/slow?n=1').then(r => r.text()).then(t => { out.textContent = t; })">fetch</button>
<button id="chain" onclick="fetch('/slow?n=1').then(r => r.text()).then(t => fetch('/slow?n=' + t.length)).then(r => r.text()).then(t => { out.textContent = 'then ' + t; })">fetch twice</button>
<button id="sync" onclick="out.textContent = 'written at once'">write now</button>
<button id="frame" onclick="requestAnimationFrame(() => { out.textContent = 'written in the next frame'; })">write next frame</button>
<button id="idle">does nothing</button>
<a id="again" href="/again">a page that never stays</a>
<input id="q" oninput="clearTimeout(self.d); self.d = setTimeout(() => { sug.textContent = 'suggestions for ' + q.value; }, 200)">
</body></html>`)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><h1>The next page</h1></body></html>`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprintf(w, "answer %s from the server", r.URL.Query().Get("n"))
	})
	mux.HandleFunc("/again", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><p>again</p><script>setTimeout(() => { location.href = '/again'; }, 100);</script></body></html>`)
	})
	mux.HandleFunc("/ticker", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><p id="n">0</p><button id="go" onclick="n.textContent = 'clicked'">go</button>
<script>setInterval(() => { n.dataset.t = Date.now(); }, 20);
const poll = () => { n.dataset.p = Date.now(); setTimeout(poll, 30); }; poll();</script></body></html>`)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Each action's outcome is read once what it set going is over: the page
// it returns to already shows the navigation's document, the fetch's
// answer, the frame's write, the debounced suggestions.
func TestAnActionIsReadOnceWhatItStartedIsOver(t *testing.T) {
	t.Parallel()
	s := settleSite(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	for _, c := range []struct {
		name   string
		act    func() (Outcome, error)
		effect Effect
		shows  string
	}{
		{"a link", func() (Outcome, error) { return p.Click(ctx, CSS("#link")) }, Navigated, "The next page"},
		{"a navigation from a timer", func() (Outcome, error) { return p.Click(ctx, CSS("#later")) }, Navigated, "The next page"},
		{"a fetch", func() (Outcome, error) { return p.Click(ctx, CSS("#fetch")) }, Changed, "answer 1 from the server"},
		{"a fetch that starts another", func() (Outcome, error) { return p.Click(ctx, CSS("#chain")) }, Changed, "then answer 24 from the server"},
		{"a write in the handler", func() (Outcome, error) { return p.Click(ctx, CSS("#sync")) }, Changed, "written at once"},
		{"a write in the next frame", func() (Outcome, error) { return p.Click(ctx, CSS("#frame")) }, Changed, "written in the next frame"},
		{"a write from a timer", func() (Outcome, error) { return p.Click(ctx, CSS("#menu")) }, Changed, "the menu opened"},
		{"a debounced suggestion", func() (Outcome, error) { return p.Type(ctx, CSS("#q"), "desk", false) }, Changed, "suggestions for desk"},
		{"nothing", func() (Outcome, error) { return p.Click(ctx, CSS("#idle")) }, Nothing, "nothing yet"},
	} {
		mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/start"))
		out, err := c.act()
		if err != nil || out.Effect != c.effect {
			t.Errorf("%s: %v, %v; want %s", c.name, out, err, c.effect)
			continue
		}
		text, err := p.ExtractPage(ctx)
		if err != nil || !strings.Contains(text, c.shows) {
			t.Errorf("%s: the page reads %q right after (%v); want it to show %q", c.name, text, err, c.shows)
		}
		if c.effect == Navigated && !strings.HasSuffix(out.URL, "/next") {
			t.Errorf("%s: navigated to %s", c.name, out.URL)
		}
	}
}

// A page that never stops changing (an attribute rewritten every 20 ms,
// a loop of timers that never ends, a navigation to itself every 100 ms)
// still has its action read, once the wait's bound is spent.
func TestAnActionOnAPageThatNeverSettles(t *testing.T) {
	t.Parallel()
	s := settleSite(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/ticker"))
	mustAct(t, Changed)(p.Click(ctx, CSS("#go")))
	// A page that navigates itself again and again, for ever.
	mustAct(t, Navigated)(p.Navigate(ctx, s.URL+"/start"))
	mustAct(t, Navigated)(p.Click(ctx, CSS("#again")))
}
