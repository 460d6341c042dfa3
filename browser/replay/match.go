package replay

import (
	"bytes"
	"mime"
	"net/url"
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
}

// NewMatcher indexes an archive.
func NewMatcher(a *Archive, opts Options) *Matcher {
	m := &Matcher{opts: opts, byKey: map[string][]int{}, byPath: map[string][]int{}, log: a.Log, at: a.Recorded()}
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
