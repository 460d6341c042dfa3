package replay

import (
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/har"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Redacted replaces every secret value the recorder writes.
const Redacted = redact.Marker

// Redactor decides which header values, query parameters and request
// body fields are secret, by name: the list of internal/redact, with the
// names Add and Keep change. The zero value redacts nothing;
// DefaultRedactor is what record uses.
type Redactor struct {
	names *redact.Names
}

// DefaultRedactor redacts by the documented list of secret names
// (redact.IsSecretName): credentials, session cookies, Authorization and
// the usual key and token headers, query parameters and form, multipart
// and JSON body fields named like password, api_key or refresh_token.
func DefaultRedactor() *Redactor { return &Redactor{names: &redact.Names{}} }

// Keep stops redacting a name, as a header, a parameter or a body field
// (for a recording that needs it).
func (r *Redactor) Keep(name string) {
	if r.names == nil {
		r.names = &redact.Names{}
	}
	r.names.Keep(name)
}

// Add redacts one more name, as a header, a parameter or a body field.
func (r *Redactor) Add(name string) {
	if r.names == nil {
		r.names = &redact.Names{}
	}
	r.names.Add(name)
}

// AddValue redacts a field whose whole value is v whatever its name, and
// v wherever it stands in a request body: what was typed into a password
// field.
func (r *Redactor) AddValue(v string) {
	if r.names == nil {
		r.names = &redact.Names{}
	}
	r.names.AddValue(v)
}

// secret reports whether a name's value is to be redacted.
func (r *Redactor) secret(name string) bool {
	return r != nil && r.names != nil && r.names.Secret(name)
}

// Header reports whether a header's value is secret.
func (r *Redactor) Header(name string) bool { return r.secret(name) }

// URL returns u with secret query values replaced, and every secret
// value (a typed password, a task's secret, a cookie's value) wherever
// it stands in u: a path, a query a page's script wrote. Replay applies
// the same function to the browser's request before matching, so a
// redacted URL still matches.
func (r *Redactor) URL(u string) string {
	u = r.values(u)
	if r == nil || r.names == nil || !strings.Contains(u, "?") {
		return u
	}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return u
	}
	q, changed := r.names.Query(pu.RawQuery)
	if !changed {
		return u
	}
	pu.RawQuery = q
	return pu.String()
}

// Body returns a request body with its secret fields (password, token,
// ...) replaced: form-encoded and multipart/form-data fields, and JSON
// keys at any depth whatever the content type says (page scripts often
// post JSON as text/plain). Other bodies are returned as they are. Replay
// applies it to the browser's body before matching, as with URLs.
func (r *Redactor) Body(contentType string, body []byte) []byte {
	if r == nil || r.names == nil || len(body) == 0 {
		return body
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case mt == "application/x-www-form-urlencoded":
		if b, changed := r.names.Query(string(body)); changed {
			body = []byte(b)
		}
	case mt == "multipart/form-data":
		if b, changed := r.names.Multipart(params["boundary"], body); changed {
			body = b
		}
	default:
		if b, changed := r.names.JSON(body); changed {
			body = b
		}
	}
	// A typed secret in a body of no known shape (text/plain, a page's
	// own encoding) has no field to be redacted by.
	return []byte(r.values(string(body)))
}

// values replaces every secret value in s: those the redactor was given
// (AddValue) and the process's (redact.Values), in whatever form the
// page gave them.
func (r *Redactor) values(s string) string {
	if r != nil && r.names != nil {
		s = r.names.ScrubString(s)
	}
	return redact.Values(s)
}

// scrubEntry replaces every secret value (values) in every string of e
// a value can travel in: the URL, its query, each header and cookie of
// either side, the posted data, the redirect and the response's text.
// Names mark nothing there: a page moves a value where it likes.
func (r *Redactor) scrubEntry(e *har.Entry) {
	if e == nil {
		return
	}
	pairs := func(ps []*har.NameValuePair) {
		for _, p := range ps {
			if p != nil {
				p.Name, p.Value = r.values(p.Name), r.values(p.Value)
			}
		}
	}
	cookies := func(cs []*har.Cookie) {
		for _, c := range cs {
			if c != nil {
				c.Name, c.Value, c.Path = r.values(c.Name), r.values(c.Value), r.values(c.Path)
			}
		}
	}
	if q := e.Request; q != nil {
		q.URL = r.values(q.URL)
		pairs(q.Headers)
		pairs(q.QueryString)
		cookies(q.Cookies)
		if pd := q.PostData; pd != nil {
			pd.Text = r.values(pd.Text)
			for _, p := range pd.Params {
				if p != nil {
					p.Name, p.Value, p.FileName = r.values(p.Name), r.values(p.Value), r.values(p.FileName)
				}
			}
		}
	}
	if s := e.Response; s != nil {
		pairs(s.Headers)
		cookies(s.Cookies)
		s.RedirectURL = r.values(s.RedirectURL)
		s.StatusText = r.values(s.StatusText)
		if c := s.Content; c != nil && len(c.Text) > 0 && utf8.Valid(c.Text) {
			if t := r.values(string(c.Text)); t != string(c.Text) {
				c.Text, c.Size = []byte(t), int64(len(t))
			}
		}
	}
}

// Entry redacts an entry in place: headers, cookies, the URL's secret
// parameters and the request body's secret fields.
func (r *Redactor) Entry(e *har.Entry) {
	if r == nil || e == nil {
		return
	}
	if q := e.Request; q != nil {
		q.URL = r.URL(q.URL)
		r.pairs(q.Headers)
		for _, p := range q.QueryString {
			if p != nil && r.secret(p.Name) {
				p.Value = Redacted
			}
		}
		for _, c := range q.Cookies {
			c.Value = Redacted
		}
		if pd := q.PostData; pd != nil {
			pd.Text = string(r.Body(pd.MimeType, []byte(pd.Text)))
			for _, p := range pd.Params {
				if p != nil && r.secret(p.Name) {
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

// minEcho is the shortest secret value scrubbed from response bodies: a
// shorter one (a pin, "1") would match text that is no secret.
const minEcho = 8

// secretValues are the values Entry is about to redact from e, for
// Scrub: a server often echoes a token or a session id into the page or
// a later response, where no name marks it.
func (r *Redactor) secretValues(e *har.Entry) []string {
	if r == nil || e == nil || e.Request == nil {
		return nil
	}
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minEcho {
			out = append(out, v)
		}
	}
	for _, p := range e.Request.QueryString {
		if p != nil && r.secret(p.Name) {
			add(p.Value)
		}
	}
	header := func(name, value string) {
		switch {
		case strings.EqualFold(name, "cookie"):
			for _, c := range strings.Split(value, ";") {
				_, v, _ := strings.Cut(c, "=")
				add(v)
			}
		case strings.EqualFold(name, "set-cookie"):
			first, _, _ := strings.Cut(value, ";")
			_, v, _ := strings.Cut(first, "=")
			add(v)
		case r.Header(name):
			add(value)
			if _, tok, ok := strings.Cut(value, " "); ok { // Bearer x, Basic x
				add(tok)
			}
		}
	}
	for _, h := range e.Request.Headers {
		if h != nil {
			header(h.Name, h.Value)
		}
	}
	if e.Response != nil {
		for _, h := range e.Response.Headers {
			if h != nil {
				header(h.Name, h.Value)
			}
		}
	}
	return out
}
