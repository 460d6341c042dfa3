package replay

import (
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/har"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Redacted replaces every secret value the recorder writes.
const Redacted = redact.Marker

// Redactor decides which header values and query parameters are secret.
// The zero value redacts nothing; DefaultRedactor is what record uses.
type Redactor struct {
	Headers map[string]bool // lower-case header names
	Params  map[string]bool // lower-case query parameter names
}

// DefaultRedactor redacts credentials and session cookies: Authorization,
// Cookie, Set-Cookie, api-key and the usual token headers, and query
// parameters that carry keys or tokens.
func DefaultRedactor() *Redactor {
	r := &Redactor{Headers: map[string]bool{}, Params: map[string]bool{}}
	for _, h := range []string{
		"authorization", "proxy-authorization", "cookie", "set-cookie", "set-cookie2",
		"api-key", "x-api-key", "ocp-apim-subscription-key", "x-auth-token",
		"x-access-token", "x-csrf-token", "x-xsrf-token", "x-amz-security-token",
		"x-goog-api-key", "private-token",
	} {
		r.Headers[h] = true
	}
	for _, p := range []string{
		"api-key", "api_key", "apikey", "access_token", "id_token", "refresh_token",
		"client_secret", "password", "passwd", "pwd", "secret", "sig", "signature", "token",
	} {
		r.Params[p] = true
	}
	return r
}

// Keep stops redacting a header (for a recording that needs it).
func (r *Redactor) Keep(header string) { delete(r.Headers, strings.ToLower(header)) }

// Add redacts one more header.
func (r *Redactor) Add(header string) {
	if r.Headers == nil {
		r.Headers = map[string]bool{}
	}
	r.Headers[strings.ToLower(header)] = true
}

// Header reports whether a header's value is secret.
func (r *Redactor) Header(name string) bool {
	return r != nil && r.Headers[strings.ToLower(name)]
}

// URL returns u with secret query values replaced. Replay applies the same
// function to the browser's request before matching, so a redacted URL
// still matches.
func (r *Redactor) URL(u string) string {
	if r == nil || len(r.Params) == 0 || !strings.Contains(u, "?") {
		return u
	}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return u
	}
	q, changed := r.form(pu.RawQuery)
	if !changed {
		return u
	}
	pu.RawQuery = q
	return pu.String()
}

// Body returns a form-encoded request body with secret fields (password,
// token, ...) replaced; other bodies are returned as they are. Replay
// applies it to the browser's body before matching, as with URLs.
func (r *Redactor) Body(contentType string, body []byte) []byte {
	if r == nil || len(r.Params) == 0 || len(body) == 0 ||
		!strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/x-www-form-urlencoded") {
		return body
	}
	if b, changed := r.form(string(body)); changed {
		return []byte(b)
	}
	return body
}

// form redacts the secret values of a name=value&... string, keeping
// everything else byte for byte.
func (r *Redactor) form(s string) (string, bool) {
	parts := strings.Split(s, "&")
	changed := false
	for i, kv := range parts {
		k, _, found := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if found && r.Params[strings.ToLower(name)] {
			parts[i] = k + "=" + url.QueryEscape(Redacted)
			changed = true
		}
	}
	return strings.Join(parts, "&"), changed
}

// Entry redacts an entry in place: headers, cookies and the URL's secret
// parameters.
func (r *Redactor) Entry(e *har.Entry) {
	if r == nil || e == nil {
		return
	}
	if q := e.Request; q != nil {
		q.URL = r.URL(q.URL)
		r.pairs(q.Headers)
		for _, p := range q.QueryString {
			if p != nil && r.Params[strings.ToLower(p.Name)] {
				p.Value = Redacted
			}
		}
		for _, c := range q.Cookies {
			c.Value = Redacted
		}
		if pd := q.PostData; pd != nil {
			pd.Text = string(r.Body(pd.MimeType, []byte(pd.Text)))
			for _, p := range pd.Params {
				if p != nil && r.Params[strings.ToLower(p.Name)] {
					p.Value = Redacted
				}
			}
		}
	}
	if s := e.Response; s != nil {
		r.pairs(s.Headers)
		for _, c := range s.Cookies {
			c.Value = Redacted
		}
		s.RedirectURL = r.URL(s.RedirectURL)
	}
}

func (r *Redactor) pairs(hs []*har.NameValuePair) {
	for _, h := range hs {
		if h == nil {
			continue
		}
		if r.Header(h.Name) {
			h.Value = Redacted
		} else if strings.EqualFold(h.Name, "location") || strings.EqualFold(h.Name, "referer") {
			h.Value = r.URL(h.Value)
		}
	}
}
