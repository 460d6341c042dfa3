package browser

import (
	"context"
	"net/url"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/redact"
)

// A cookie is a credential the page holds for the run: a session a server
// set, one a script wrote with document.cookie, one a storage state
// brought. A page that shows one (a debug line, "your session: …") must
// not put it in a prompt or an output, so each cookie's value is a secret
// of the run by value (redact.Secret) before the page is shown to anyone:
// the Marker stands where it was, by no name.
//
// A cookie that holds a flag or a word ("1", "en", "dismissed") is no
// credential, and removing such words wherever the page writes them would
// leave the page unreadable; so a value is kept secret when it is at
// least redact.MinEcho characters and not a word of letters alone
// shorter than 16, or, under a name the secret-name list knows (session,
// sid, token, …), at least redact.MinValue.

// cookieSecret reports whether a cookie's value is kept secret.
func cookieSecret(name, value string) bool {
	if v, err := url.QueryUnescape(value); err == nil {
		value = v
	}
	switch {
	case redact.IsSecretName(name):
		return len(value) >= redact.MinValue
	case len(value) < redact.MinEcho:
		return false
	case len(value) < 16 && lettersOnly(value):
		return false
	}
	return true
}

func lettersOnly(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// learnCookie makes a cookie's value a secret of the run when it is one
// (cookieSecret), as written and unescaped.
func learnCookie(name, value string) {
	if !cookieSecret(name, value) {
		return
	}
	redact.Secret(value)
	if v, err := url.QueryUnescape(value); err == nil && v != value {
		redact.Secret(v)
	}
}

// learnCookies makes the values of the cookies the tab's documents hold
// secrets of the run (learnCookie), before what the page shows is
// redacted. A browser that will not say leaves what is known as it was.
func (p *Page) learnCookies(ctx context.Context) {
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		return
	}
	for _, c := range cookies.Cookies {
		learnCookie(c.Name, c.Value)
	}
}

// frameHost is a frame's host as the browser's frame tree has it: its
// security origin's, which no script of the page shapes; "" for an
// opaque origin (a sandboxed frame, a data: URL), which no domain admits.
func frameHost(f *cdp.Frame) string {
	if f == nil {
		return ""
	}
	o := f.SecurityOrigin
	if o == "" {
		o = f.URL
	}
	u, err := url.Parse(o)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
