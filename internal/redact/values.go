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
	// maxValues bounds the set: a run has a few keys, sessions and
	// passwords, and a page that mints a new token per link must not grow
	// it, and the time each output takes, without end. Values past it are
	// still redacted by name, not scrubbed as text.
	maxValues = 512
)

var values struct {
	mu    sync.Mutex
	set   map[string]bool
	dirty atomic.Bool                      // set changed since r was built
	r     atomic.Pointer[strings.Replacer] // nil while the set is empty
}

// Secret makes values secret for the rest of the process: Text replaces
// each of them wherever it stands, as written and in the forms outputs
// encode it in (a URL's, JSON's, HTML's). A value shorter than MinValue
// is ignored, and so is one that overlaps the Marker (part of it at an
// end, or the whole), whose replacement would make a new match.
func Secret(vs ...string) {
	values.mu.Lock()
	defer values.mu.Unlock()
	for _, v := range vs {
		if len(v) < MinValue || overlapsMarker(v) || values.set[v] || len(values.set) >= maxValues {
			continue
		}
		if values.set == nil {
			values.set = map[string]bool{}
		}
		values.set[v] = true
		values.dirty.Store(true)
	}
}

// overlapsMarker reports whether v holds the Marker, or begins with its
// end or ends with its beginning.
func overlapsMarker(v string) bool {
	if strings.Contains(v, Marker) || strings.Contains(Marker, v) {
		return true
	}
	for k := 1; k < len(Marker); k++ {
		if strings.HasPrefix(v, Marker[k:]) || strings.HasSuffix(v, Marker[:k]) {
			return true
		}
	}
	return false
}

// replacer is the replacer of the set as it is now, built again only
// after the set changed: learning many values at once costs one build.
func replacer() *strings.Replacer {
	if values.dirty.Load() {
		values.mu.Lock()
		if values.dirty.Load() {
			values.r.Store(replacerOf(values.set))
			values.dirty.Store(false)
		}
		values.mu.Unlock()
	}
	return values.r.Load()
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
	if s == "" {
		return s
	}
	r := replacer()
	if r == nil {
		return s
	}
	return r.Replace(s)
}
