// Package redact is the one rule every output keeps: the mark that stands
// where a secret was removed, the one list of names whose values are
// secret, and the process's secret values, so that HAR files, cassettes,
// results, reports, logs and errors all redact alike. What a HAR file
// redacts, no other output writes either: URL applies the rule to a URL,
// Text to any text, Copy to every string of a value, Error to an error.
//
// # Secret names
//
// A name is compared normalised: lower case, with everything but letters
// and digits dropped, so api_key, apiKey, API-Key and api.key are one
// name (apikey). A name is secret when, normalised, it
//
//   - is one of: authorization, proxyauthorization, authentication,
//     cookie, setcookie, setcookie2, auth, code, secret, sig,
//     signature, pwd, pass, passphrase, pin, otp, session, sessid, sid,
//     phpsessid, jsessionid, credential, privatekey, ocpapimsubscriptionkey,
//     subscriptionkey, clientassertion, samlresponse;
//   - contains password or passwd (password, newPassword, password2);
//   - ends with token, secret, apikey, sessionid, accesskey or secretkey
//     (access_token, refresh_token, X-Session-Token, X-CSRF-Token,
//     client_secret, x-api-key, session_id, aws_secret_key).
//
// Header names, query parameters, form and multipart fields and JSON keys
// (at any depth) all go through the same test. Extend adds names to the
// list for the whole process (a config's redact: list and the --redact
// flag); a Names adds names to it or keeps some out of it for one user
// (Add, Keep), such as a recording that needs one of them.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"sync"
)

// Marker replaces a secret's value.
const Marker = "[redacted]"

var exact = map[string]bool{}

func init() {
	for _, n := range []string{
		"authorization", "proxyauthorization", "authentication",
		"cookie", "setcookie", "setcookie2", "auth", "code", "secret", "sig",
		"signature", "pwd", "pass", "passphrase", "pin", "otp", "session",
		"sessid", "sid", "phpsessid", "jsessionid", "credential", "privatekey",
		"ocpapimsubscriptionkey", "subscriptionkey", "clientassertion", "samlresponse",
	} {
		exact[n] = true
	}
}

var (
	contains = []string{"password", "passwd"}
	suffixes = []string{"token", "secret", "apikey", "sessionid", "accesskey", "secretkey"}
)

// Normalize is the form names are compared in: lower case letters and
// digits only.
func Normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IsSecretName reports whether a header, parameter or field of this name
// holds a secret, by the list in the package comment.
func IsSecretName(name string) bool { return builtin(Normalize(name)) }

// Extend makes names secret everywhere in this process, from now on: in
// HAR files, cassettes, logs and errors alike. Names compare normalised
// (Normalize); one that normalises to nothing is ignored.
func Extend(names ...string) {
	extended.Lock()
	defer extended.Unlock()
	for _, s := range names {
		if k := Normalize(s); k != "" {
			if extended.m == nil {
				extended.m = map[string]bool{}
			}
			extended.m[k] = true
		}
	}
}

var extended struct {
	sync.RWMutex
	m map[string]bool
}

func builtin(n string) bool {
	if n == "" {
		return false
	}
	if exact[n] {
		return true
	}
	extended.RLock()
	ext := extended.m[n]
	extended.RUnlock()
	if ext {
		return true
	}
	for _, c := range contains {
		if strings.Contains(n, c) {
			return true
		}
	}
	for _, s := range suffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// Names is the list of secret names with a configuration's changes: names
// added to it and names kept out of it. The zero value and nil are the
// list as documented.
type Names struct {
	mu        sync.RWMutex // a recording's names grow while its requests are redacted
	add, keep map[string]bool
	values    map[string]bool // secret by value, whatever the field's name
	scrub     Set             // the same values, as Scrub finds them
}

// AddValue makes a field secret whatever its name when its whole value is
// v, and v secret inside the text Scrub is given: a password typed into
// a field whose name no list knows. An empty v is ignored.
func (n *Names) AddValue(v string) {
	if v == "" {
		return
	}
	n.mu.Lock()
	if n.values == nil {
		n.values = map[string]bool{}
	}
	n.values[v] = true
	n.mu.Unlock()
	n.scrub.Add(v, Marker)
}

// valueSecret reports whether a field holding v is secret by its value.
func (n *Names) valueSecret(v string) bool {
	if n == nil || v == "" {
		return false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.values[v]
}

// Scrub replaces each of n's values (AddValue) wherever it stands in b,
// in any form a page or an encoding gives it (as Text does), for a body
// no field structure marks them in.
func (n *Names) Scrub(b []byte) []byte {
	if n == nil || len(b) == 0 || n.scrub.Len() == 0 {
		return b
	}
	s := string(b)
	if r := n.scrub.Replace(s); r != s {
		return []byte(r)
	}
	return b
}

// ScrubString is Scrub for a string.
func (n *Names) ScrubString(s string) string {
	if n == nil {
		return s
	}
	return n.scrub.Replace(s)
}

// Add makes names secret too.
func (n *Names) Add(names ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range names {
		if n.add == nil {
			n.add = map[string]bool{}
		}
		k := Normalize(s)
		n.add[k] = true
		delete(n.keep, k)
	}
}

// Keep makes names not secret (for a recording that needs one of them).
func (n *Names) Keep(names ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range names {
		if n.keep == nil {
			n.keep = map[string]bool{}
		}
		k := Normalize(s)
		n.keep[k] = true
		delete(n.add, k)
	}
}

// Secret reports whether a name is secret.
func (n *Names) Secret(name string) bool {
	k := Normalize(name)
	if n != nil {
		n.mu.RLock()
		keep, add := n.keep[k], n.add[k]
		n.mu.RUnlock()
		if keep {
			return false
		}
		if add {
			return true
		}
	}
	return builtin(k)
}

// Header reports whether a header's value is secret.
func Header(name string) bool { return IsSecretName(name) }

// Query redacts the secret values of a query or form string
// (name=value&...); see Names.Query.
func Query(s string) string { r, _ := (*Names)(nil).Query(s); return r }

// JSON redacts the values of secret-named keys in a JSON document; see
// Names.JSON.
func JSON(b []byte) []byte { r, _ := (*Names)(nil).JSON(b); return r }

// Query replaces the values of secret names in a name=value&... string
// with the Marker, keeping everything else byte for byte, and reports
// whether it changed anything.
func (n *Names) Query(s string) (string, bool) { return n.query(s, nil) }

// query is Query, calling found with each value it replaces, unescaped.
// A field whose value is one of n's values is replaced whatever its name.
func (n *Names) query(s string, found func(value string)) (string, bool) {
	if s == "" {
		return s, false
	}
	parts := strings.Split(s, "&")
	changed := false
	for i, kv := range parts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			value = v
		}
		if value == Marker || !n.Secret(name) && !n.valueSecret(value) {
			continue
		}
		parts[i] = k + "=" + url.QueryEscape(Marker)
		changed = true
		if found != nil {
			found(value)
		}
	}
	return strings.Join(parts, "&"), changed
}

// JSON replaces the value of every secret-named key of a JSON document, at
// any depth, inside arrays and inside string values that are themselves
// JSON documents, with the Marker (a string), and reports
// whether it changed anything. A document that changes is written
// compact, its keys in their order; one that does not, or is not JSON, is
// returned as it is.
func (n *Names) JSON(b []byte) ([]byte, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return b, false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var out bytes.Buffer
	changed, err := n.value(dec, &out)
	if err != nil || !changed {
		return b, false
	}
	if _, err := dec.Token(); err != io.EOF { // trailing data: not one document
		return b, false
	}
	return out.Bytes(), true
}

// value copies one JSON value from dec to out, redacting as it goes.
func (n *Names) value(dec *json.Decoder, out *bytes.Buffer) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch d := tok.(type) {
	case json.Delim:
		changed := false
		if d == '{' {
			out.WriteByte('{')
			for first := true; dec.More(); first = false {
				kt, err := dec.Token()
				if err != nil {
					return false, err
				}
				k, _ := kt.(string)
				if !first {
					out.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				out.Write(kb)
				out.WriteByte(':')
				if n.Secret(k) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return false, err
					}
					mb, _ := json.Marshal(Marker)
					out.Write(mb)
					changed = true
					continue
				}
				c, err := n.value(dec, out)
				if err != nil {
					return false, err
				}
				changed = changed || c
			}
			out.WriteByte('}')
		} else {
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				c, err := n.value(dec, out)
				if err != nil {
					return false, err
				}
				changed = changed || c
			}
			out.WriteByte(']')
		}
		_, err := dec.Token() // the closing delimiter
		return changed, err
	case json.Number:
		out.WriteString(d.String())
	case string:
		if n.valueSecret(d) {
			mb, _ := json.Marshal(Marker)
			out.Write(mb)
			return true, nil
		}
		// A string that is itself a JSON document (a body posted inside
		// another, a call's input in a message) is redacted too.
		if r, changed := n.JSON([]byte(d)); changed {
			b, _ := json.Marshal(string(r))
			out.Write(b)
			return true, nil
		}
		b, _ := json.Marshal(d)
		out.Write(b)
	default: // bool, nil
		b, err := json.Marshal(d)
		if err != nil {
			return false, err
		}
		out.Write(b)
	}
	return false, nil
}

// Multipart replaces the content of every secret-named part of a
// multipart/form-data body with the Marker, keeping everything else byte
// for byte, and reports whether it changed anything. boundary is the
// content type's boundary parameter.
func (n *Names) Multipart(boundary string, body []byte) ([]byte, bool) {
	if boundary == "" || len(body) == 0 {
		return body, false
	}
	delim := []byte("--" + boundary)
	chunks := bytes.Split(body, delim)
	changed := false
	for i, c := range chunks {
		if i == 0 {
			continue // the preamble
		}
		head, content, ok := bytes.Cut(c, []byte("\r\n\r\n"))
		if !ok {
			continue
		}
		// The content runs to the CRLF that precedes the next delimiter.
		tail := []byte{}
		if i < len(chunks)-1 && bytes.HasSuffix(content, []byte("\r\n")) {
			tail = []byte("\r\n")
		}
		name, found := partName(string(head))
		if !found || !n.Secret(name) && !n.valueSecret(string(bytes.TrimSuffix(content, tail))) {
			continue
		}
		var nc []byte
		nc = append(nc, head...)
		nc = append(nc, "\r\n\r\n"...)
		nc = append(nc, Marker...)
		nc = append(nc, tail...)
		chunks[i] = nc
		changed = true
	}
	if !changed {
		return body, false
	}
	return bytes.Join(chunks, delim), true
}

// partName finds the name parameter of a part's Content-Disposition.
func partName(head string) (string, bool) {
	for _, l := range strings.Split(head, "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "content-disposition") {
			continue
		}
		for _, p := range strings.Split(v, ";") {
			pk, pv, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(pk, "name") {
				return strings.Trim(pv, `"`), true
			}
		}
	}
	return "", false
}
