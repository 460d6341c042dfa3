package replay

import (
	"bytes"
	"mime"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/har"
)

// Request is what the browser asked for, as replay sees it.
type Request struct {
	Method  string
	URL     string
	Body    []byte
	Headers map[string]string
}

// Match is the entry that answers a request, and how it was found.
type Match struct {
	Entry *har.Entry
	Index int  // position in the archive
	Fuzzy bool // found by the fuzzy rule, not by its exact URL
}

// Options tune a Matcher.
type Options struct {
	// Fuzzy lets a request with no exact URL match take the entry with the
	// same scheme, host and path and the most query parameters in common.
	// Off by default: a fuzzy answer can be silently wrong.
	Fuzzy bool
	// Redactor is applied to request URLs before matching; use the one the
	// archive was recorded with (record uses DefaultRedactor).
	Redactor *Redactor
}

// Stats counts what a Matcher answered.
type Stats struct {
	Served int      `json:"served"`
	Fuzzy  int      `json:"fuzzy"`
	Misses int      `json:"misses"`
	Missed []string `json:"missed,omitempty"` // "METHOD URL" of each miss, in order
}

// Matcher answers requests from an archive. It is safe for concurrent use.
//
// The rule: method and URL exact; then, among those, a request body equal
// to the recorded one (multipart boundaries aside); then the most headers
// in common. Identical requests get the recorded responses in recorded
// order; once those are used up the last one is served again.
type Matcher struct {
	opts   Options
	mu     sync.Mutex
	byKey  map[string][]int // method + " " + URL → entry indexes, recorded order
	byPath map[string][]int // method + " " + scheme://host/path → entry indexes
	served []int            // times each entry was served
	log    *har.Log
	stats  Stats
	at     time.Time
	source string
}

// NewMatcher indexes an archive.
func NewMatcher(a *Archive, opts Options) *Matcher {
	m := &Matcher{opts: opts, byKey: map[string][]int{}, byPath: map[string][]int{}, log: a.Log, at: a.Recorded(), source: a.Source}
	m.served = make([]int, len(a.Log.Entries))
	for i, e := range a.Log.Entries {
		// Redacted as a live request is: an archive recorded with a name
		// kept, or before a name joined the list, still matches.
		u := opts.Redactor.URL(e.Request.URL)
		k := key(e.Request.Method, u)
		m.byKey[k] = append(m.byKey[k], i)
		if p, ok := pathKey(e.Request.Method, u); ok {
			m.byPath[p] = append(m.byPath[p], i)
		}
	}
	return m
}

// Secret makes a value typed into a password field match as the
// recording redacted it (Recorder.Secret): a request body or query field
// holding it is compared with the value redacted. Call it before the
// value can be sent.
func (m *Matcher) Secret(value string) {
	if m.opts.Redactor != nil && value != "" {
		m.opts.Redactor.AddValue(value)
	}
}

func key(method, u string) string {
	u, _, _ = strings.Cut(u, "#")
	return strings.ToUpper(method) + " " + u
}

func pathKey(method, u string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", false
	}
	return strings.ToUpper(method) + " " + pu.Scheme + "://" + pu.Host + pu.EscapedPath(), true
}

// Has reports whether the archive holds an exchange of method and URL,
// exactly, without serving it or counting a miss: for a caller that
// answers only what the archive has and lets the rest go elsewhere.
func (m *Matcher) Has(method, rawURL string) bool {
	u := m.opts.Redactor.URL(rawURL)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byKey[key(method, u)]) > 0
}

// HasPage reports whether a replay can start at rawURL: whether the
// archive holds a GET of it as a browser requests it (no fragment, "/"
// for an empty path), exactly or, with Options.Fuzzy, by its path.
func (m *Matcher) HasPage(rawURL string) bool {
	u := m.opts.Redactor.URL(asRequested(rawURL))
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.byKey[key("GET", u)]) > 0 {
		return true
	}
	p, ok := pathKey("GET", u)
	return m.opts.Fuzzy && ok && len(m.byPath[p]) > 0
}

// asRequested is rawURL as a browser puts it on the wire: without its
// fragment, and with "/" for an empty path.
func asRequested(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	return u.String()
}

// Match finds the entry for r and marks it served, or counts a miss.
func (m *Matcher) Match(r Request) (Match, bool) {
	u := m.opts.Redactor.URL(r.URL)
	r.Body = m.opts.Redactor.Body(headerValue(r.Headers, "content-type"), r.Body)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.byKey[key(r.Method, u)]; len(c) > 0 {
		if i, ok := m.pick(c, r); ok {
			m.stats.Served++
			return Match{Entry: m.log.Entries[i], Index: i}, true
		}
	}
	if m.opts.Fuzzy {
		if i, ok := m.fuzzy(r.Method, u, r); ok {
			m.stats.Served++
			m.stats.Fuzzy++
			return Match{Entry: m.log.Entries[i], Index: i, Fuzzy: true}, true
		}
	}
	m.stats.Misses++
	m.stats.Missed = append(m.stats.Missed, strings.ToUpper(r.Method)+" "+u)
	return Match{}, false
}

// pick chooses among entries with the request's method and URL.
func (m *Matcher) pick(cands []int, r Request) (int, bool) {
	if hasBody(r.Method) {
		var same []int
		for _, i := range cands {
			if bodiesEqual(m.opts.Redactor, m.log.Entries[i], r) {
				same = append(same, i)
			}
		}
		if len(same) == 0 {
			return 0, false
		}
		cands = same
	}
	best, bestUnserved := -1, -1
	bestScore, bestUnservedScore := -1, -1
	for _, i := range cands {
		s := headerScore(m.log.Entries[i].Request.Headers, r.Headers)
		// Later entries win ties among served ones: a page that polls more
		// often than it did while recording sees the latest state.
		if s >= bestScore {
			best, bestScore = i, s
		}
		if m.served[i] == 0 && s > bestUnservedScore {
			bestUnserved, bestUnservedScore = i, s
		}
	}
	if bestUnserved >= 0 {
		best = bestUnserved
	}
	m.served[best]++
	return best, true
}

// fuzzy finds the entry with the same path and the best query overlap;
// ties go to the earlier entry.
func (m *Matcher) fuzzy(method, u string, r Request) (int, bool) {
	pk, ok := pathKey(method, u)
	if !ok {
		return 0, false
	}
	cands := m.byPath[pk]
	if len(cands) == 0 {
		return 0, false
	}
	q := queryOf(u)
	type scored struct {
		i int
		s float64
	}
	var ss []scored
	for _, i := range cands {
		ss = append(ss, scored{i, queryOverlap(q, queryOf(m.opts.Redactor.URL(m.log.Entries[i].Request.URL)))})
	}
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
	top := ss[0].s
	var best []int
	for _, s := range ss {
		if s.s == top {
			best = append(best, s.i)
		}
	}
	sort.Ints(best)
	return m.pick(best, r)
}

func queryOf(u string) url.Values {
	pu, err := url.Parse(u)
	if err != nil {
		return nil
	}
	return pu.Query()
}

// queryOverlap is 2·(1+same)/(2+|a|+|b|): 1 for identical queries, falling
// with each parameter that differs.
func queryOverlap(a, b url.Values) float64 {
	same := 0
	for k, av := range a {
		if bv, ok := b[k]; ok && strings.Join(av, "\x00") == strings.Join(bv, "\x00") {
			same++
		}
	}
	return 2 * float64(1+same) / float64(2+len(a)+len(b))
}

func headerScore(recorded []*har.NameValuePair, got map[string]string) int {
	n := 0
	for _, h := range recorded {
		if h == nil {
			continue
		}
		for k, v := range got {
			if strings.EqualFold(k, h.Name) && v == h.Value {
				n++
				break
			}
		}
	}
	return n
}

func hasBody(method string) bool {
	switch strings.ToUpper(method) {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

func bodiesEqual(red *Redactor, e *har.Entry, r Request) bool {
	var rec []byte
	var mimeType string
	if pd := e.Request.PostData; pd != nil {
		rec, mimeType = red.Body(pd.MimeType, []byte(pd.Text)), pd.MimeType
	}
	if bytes.Equal(rec, r.Body) {
		return true
	}
	// Multipart boundaries are random per request: compare without them.
	rb := boundary(mimeType)
	qb := boundary(headerValue(r.Headers, "content-type"))
	if rb == "" || qb == "" {
		return false
	}
	return bytes.Equal(bytes.ReplaceAll(rec, []byte(rb), nil), bytes.ReplaceAll(r.Body, []byte(qb), nil))
}

func boundary(contentType string) string {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return ""
	}
	return params["boundary"]
}

func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Recorded is when the archive was recorded: the clock a replayed page
// starts from.
func (m *Matcher) Recorded() time.Time { return m.at }

// Source is where the matcher's archive was read from (Archive.Source);
// empty for an archive made in memory.
func (m *Matcher) Source() string { return m.source }

// Name is the archive's file name for a message: Source's base name, or
// "the replayed archive" when it has none.
func (m *Matcher) Name() string {
	if m.source == "" {
		return "the replayed archive"
	}
	return filepath.Base(m.source)
}

// Pages lists the archive's documents, the URLs a navigation can load:
// each GET answered with HTML or a redirect, once, in recorded order.
func (m *Matcher) Pages() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range m.log.Entries {
		if !strings.EqualFold(e.Request.Method, "GET") || !isDocument(e.Response) {
			continue
		}
		if u := e.Request.URL; !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// URLs lists the URLs recorded for a method, once each, in recorded order.
func (m *Matcher) URLs(method string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range m.log.Entries {
		if u := e.Request.URL; strings.EqualFold(e.Request.Method, method) && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

func isDocument(r *har.Response) bool {
	if r.Status >= 300 && r.Status < 400 {
		return true
	}
	mt := ""
	if r.Content != nil {
		mt, _, _ = mime.ParseMediaType(r.Content.MimeType)
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// Nearest orders urls by how close each is to u and returns at most n:
// those on u's scheme and host first, then those with its path, then
// the longest path and query in common with u's; ties keep their order.
func Nearest(u string, urls []string, n int) []string {
	type scored struct {
		u              string
		host, path     bool
		common, before int
	}
	want, _ := url.Parse(u)
	ss := make([]scored, len(urls))
	for i, c := range urls {
		ss[i] = scored{u: c, before: i}
		got, err := url.Parse(c)
		if err != nil || want == nil {
			continue
		}
		ss[i].host = got.Scheme == want.Scheme && got.Host == want.Host
		ss[i].path = got.EscapedPath() == want.EscapedPath()
		ss[i].common = commonPrefix(got.RequestURI(), want.RequestURI())
	}
	sort.SliceStable(ss, func(a, b int) bool {
		x, y := ss[a], ss[b]
		switch {
		case x.host != y.host:
			return x.host
		case x.path != y.path:
			return x.path
		}
		return x.common > y.common
	})
	out := make([]string, 0, min(n, len(ss)))
	for _, s := range ss[:min(n, len(ss))] {
		out = append(out, s.u)
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Stats returns what the matcher has answered so far.
func (m *Matcher) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Missed = append([]string(nil), s.Missed...)
	return s
}

// Reset starts the recorded order again, as for a new run on the same
// archive. Stats are kept.
func (m *Matcher) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.served)
}
