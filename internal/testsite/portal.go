package testsite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"sync"
)

// The portal's one account. The password is a canary: tests look for it
// in every output, and must find it only where the site received it.
const (
	PortalUser     = "ada.lovelace"
	PortalPassword = "wren-4417-Quill-canary"
	// PortalCookie is the portal's session cookie.
	PortalCookie = "portal_session"
	// PortalStateSession is a session the portal always knows: the one
	// testdata/tasks/portal-state.json carries, written by hand in
	// Playwright's format, as a file saved by another tool would be.
	PortalStateSession = "6f1c2a9e0b7d4e3f8a5c1d2e3f4a5b6c"
)

// portal is a site behind a login, under /portal/: a form that sets a
// session cookie, pages that need it, and a logout. Sessions live in
// memory; a session's page also keeps the user's name in localStorage,
// as single-page apps do.
type portal struct {
	mu       sync.Mutex
	sessions map[string]string // token → user
	logins   int               // right passwords received
}

// Portal serves only the portal, for tests that count its logins.
type Portal struct{ p *portal }

// Logins is how many times the right user and password reached the site.
func (p Portal) Logins() int {
	p.p.mu.Lock()
	defer p.p.mu.Unlock()
	return p.p.logins
}

func newPortal() *portal {
	return &portal{sessions: map[string]string{PortalStateSession: PortalUser}}
}

func (p *portal) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /portal/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/portal/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /portal/login", func(w http.ResponseWriter, r *http.Request) {
		p.page(w, "Sign in", `<h1>Sign in to the supplier portal</h1>
<form method="post" action="/portal/login">
<label for="user">Username</label> <input id="user" name="user" autocomplete="username">
<label for="pass">Password</label> <input id="pass" name="pass" type="password" autocomplete="current-password">
<button type="submit">Sign in</button>
</form>`)
	})
	mux.HandleFunc("POST /portal/login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.PostForm.Get("user") != PortalUser || r.PostForm.Get("pass") != PortalPassword {
			w.WriteHeader(http.StatusUnauthorized)
			p.page(w, "Sign in", `<h1>Wrong username or password</h1><p><a href="/portal/login">Try again</a></p>`)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: PortalCookie, Value: p.open(PortalUser), Path: "/portal/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, "/portal/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /portal/home", p.signedIn(func(w http.ResponseWriter, user string) {
		p.page(w, "Portal", fmt.Sprintf(`<h1>Welcome back, %s</h1>
<p>3 open invoices, 2 paid this month.</p>
<p><a href="/portal/invoices">Open invoices</a></p>
<form method="post" action="/portal/logout"><button type="submit">Sign out</button></form>
<script>localStorage.setItem("portal_user", %q)</script>`, html.EscapeString(user), user))
	}))
	mux.HandleFunc("GET /portal/invoices", p.signedIn(func(w http.ResponseWriter, user string) {
		p.page(w, "Open invoices", `<h1>Open invoices</h1>
<table><tr><th>Invoice</th><th>Due</th><th>Amount</th></tr>
<tr><td>INV-1041</td><td>12 January</td><td>1,240 EUR</td></tr>
<tr><td>INV-1042</td><td>19 January</td><td>310 EUR</td></tr>
<tr><td>INV-1047</td><td>2 February</td><td>2,085 EUR</td></tr></table>
<p><a href="/portal/home">Back</a></p>`)
	}))
	mux.HandleFunc("POST /portal/logout", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(PortalCookie); err == nil {
			p.mu.Lock()
			delete(p.sessions, c.Value)
			p.mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: PortalCookie, Value: "", Path: "/portal/", MaxAge: -1})
		http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
	})
}

// open starts a session for user and returns its token.
func (p *portal) open(user string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions[token] = user
	p.logins++
	return token
}

// signedIn serves a page to a session's user, and sends anyone else to
// the login form.
func (p *portal) signedIn(serve func(w http.ResponseWriter, user string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user := ""
		if c, err := r.Cookie(PortalCookie); err == nil {
			p.mu.Lock()
			user = p.sessions[c.Value]
			p.mu.Unlock()
		}
		if user == "" {
			http.Redirect(w, r, "/portal/login", http.StatusSeeOther)
			return
		}
		serve(w, user)
	}
}

func (p *portal) page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=utf-8><title>%s</title></head><body>%s</body></html>", title, body)
}
