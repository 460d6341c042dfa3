package redact

import (
	"encoding/json"
	"html/template"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Secret values are secret wherever they stand, with no name beside them
// to say so: a deployment's key echoed in an error body, a token a page
// shows, a password typed into a field named "pw1". The process keeps one
// set; Text replaces each of them in whatever it is given, so every
// output that passes through Text holds none.

const (
	// MinValue is the shortest value Secret keeps: a shorter one ("1",
	// "ab") would match text that is no secret wherever it stood.
	MinValue = 4
	// MinEcho is the shortest value of a secret-named parameter that is
	// also scrubbed where no name marks it: a shorter one (a pin, a page
	// number under a name like sid) matches too much else.
	MinEcho = 8
	// maxValues bounds the set: a long run sees the same few session ids,
	// and a page that mints a new token per link must not grow it without
	// end. Values past it are still redacted by name, not scrubbed as text.
	maxValues = 4096
)

var values struct {
	mu  sync.Mutex
	set map[string]bool
	r   atomic.Pointer[strings.Replacer] // nil while the set is empty
}

// Secret makes values secret for the rest of the process: Text replaces
// each of them wherever it stands, as written and in the forms outputs
// encode it in (a URL's, JSON's, HTML's). A value shorter than MinValue
// is ignored.
func Secret(vs ...string) {
	values.mu.Lock()
	defer values.mu.Unlock()
	changed := false
	for _, v := range vs {
		if len(v) < MinValue || values.set[v] || len(values.set) >= maxValues {
			continue
		}
		if values.set == nil {
			values.set = map[string]bool{}
		}
		values.set[v] = true
		changed = true
	}
	if changed {
		values.r.Store(replacerOf(values.set))
	}
}

// IsSecret reports whether v is one of the values Secret was given.
func IsSecret(v string) bool {
	values.mu.Lock()
	defer values.mu.Unlock()
	return values.set[v]
}

// replacerOf replaces each value and its encoded forms with the Marker;
// longer forms first, so a value inside a longer one is not cut first.
func replacerOf(set map[string]bool) *strings.Replacer {
	seen := map[string]bool{}
	var forms []string
	for v := range set {
		for _, f := range encodings(v) {
			if f != "" && !seen[f] {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	args := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		args = append(args, f, Marker)
	}
	return strings.NewReplacer(args...)
}

// encodings are the ways an output may write v: as it is, escaped for a
// query or a path, inside a JSON string (with and without HTML escapes)
// and in HTML.
func encodings(v string) []string {
	js, _ := json.Marshal(v)
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	unquote := func(s string) string {
		s = strings.TrimSpace(s)
		return strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	}
	return []string{v, url.QueryEscape(v), url.PathEscape(v), unquote(string(js)), unquote(plain.String()), template.HTMLEscapeString(v)}
}

// scrubValues replaces every secret value in s.
func scrubValues(s string) string {
	r := values.r.Load()
	if r == nil || s == "" {
		return s
	}
	return r.Replace(s)
}
