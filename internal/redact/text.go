package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// One rule for every output: what a HAR file redacts, nothing else
// writes either. URL is the rule for a URL an output names (a page's
// address, a link, a refused request); Text is the rule for anything
// written at all (a prompt, a log line, an error, a result file).

// URL returns u fit for any output: without its user and password, and
// with the value of every secret-named parameter of its query, and of
// its fragment when that holds parameters (an OAuth token), replaced by
// the Marker, as a HAR file writes them. Each value replaced is made
// secret (when at least MinEcho long), so it is scrubbed wherever else
// it turns up; then u is scrubbed of every secret value, as Text does.
func URL(u string) string {
	if u == "" {
		return u
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Opaque != "" {
		return Text(u)
	}
	// Written again only when something was taken out, so that a URL with
	// nothing secret is left byte for byte.
	changed := pu.User != nil
	pu.User = nil
	if q, ok := (*Names)(nil).query(pu.RawQuery, learn); ok {
		pu.RawQuery, changed = q, true
	}
	if f := pu.EscapedFragment(); strings.Contains(f, "=") {
		if r, ok := (*Names)(nil).query(f, learn); ok {
			pu.Fragment, _ = url.PathUnescape(r)
			pu.RawFragment, changed = r, true
		}
	}
	if changed {
		u = pu.String()
	}
	return scrubValues(u)
}

// LearnURL makes the value of every secret-named parameter of u's query
// secret (when at least MinEcho long), as URL does, without writing u: for
// a URL the process sees but never writes, such as a request a page made.
func LearnURL(u string) {
	if i := strings.IndexAny(u, "?#"); i >= 0 && strings.Contains(u[i:], "=") {
		_ = URL(u)
	}
}

// Text returns s with every secret value (Secret) replaced by the Marker,
// and the value of every secret-named parameter of a URL written in it
// (name=value after ?, &, # or ;, also as JSON and HTML escape the &).
// It is idempotent, and safe on any text, encoded or not.
func Text(s string) string {
	if s == "" {
		return s
	}
	if strings.Contains(s, "=") {
		s = redactPairs(s)
	}
	return scrubValues(s)
}

// Bytes is Text for bytes.
func Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := string(b)
	if t := Text(s); t != s {
		return []byte(t)
	}
	return b
}

// pairs finds name=value after a URL's separators. The value stops at
// what ends one in text: a separator, space, a quote, an angle bracket or
// a backslash (a JSON escape).
var pairs = regexp.MustCompile(`(&amp;|\\u0026|[?&#;])([A-Za-z0-9_.~%+\-\[\]]{1,64})=([^&#\s"'<>\\]*)`)

// redactPairs replaces the value of each secret-named pair pairs finds,
// learning it as it goes.
func redactPairs(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range pairs.FindAllStringSubmatchIndex(s, -1) {
		name, value := s[m[4]:m[5]], s[m[6]:m[7]]
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if value == "" || !IsSecretName(name) {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			learn(v)
		}
		b.WriteString(s[last:m[6]])
		b.WriteString(url.QueryEscape(Marker))
		last = m[7]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// learn makes a value redacted by name secret as a value too, unless it
// is too short to scrub (Secret refuses the Marker itself).
func learn(v string) {
	if len(v) >= MinEcho {
		Secret(v)
	}
}

// Error returns err with its message redacted by Text, still matching
// what err matches (errors.Is and As see through it); err itself when
// there is nothing to redact, and nil for nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	if msg := Text(err.Error()); msg != err.Error() {
		return &redacted{err: err, msg: msg}
	}
	return err
}

type redacted struct {
	err error
	msg string
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// Values returns s with every secret value (Secret, Key) replaced by the
// Marker, and nothing else changed: Text without its rule for names, for
// an output that applies a list of names of its own (a HAR file's).
func Values(s string) string { return scrubValues(s) }
