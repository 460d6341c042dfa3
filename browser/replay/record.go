package replay

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/har"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Header is one response header as the browser saw it.
type Header struct{ Name, Value string }

// Exchange is one request and its response, as the browser saw them.
type Exchange struct {
	Seq             int64 // order the browser sent the requests in
	Started         time.Time
	Duration        time.Duration
	Method, URL     string
	RequestHeaders  map[string]string
	RequestBody     []byte
	Status          int
	StatusText      string
	ResponseHeaders []Header
	Body            []byte // decoded (no content encoding)
}

// Recorder collects exchanges from concurrent handlers and turns them into
// an archive, redacting as it goes, so a secret is never held in the
// archive even briefly.
type Recorder struct {
	mu       sync.Mutex
	archive  *Archive
	redactor *Redactor
	seqs     []int64
}

// NewRecorder starts an archive recorded at t; r may be nil (no redaction).
func NewRecorder(t time.Time, r *Redactor, creator, version string) *Recorder {
	return &Recorder{archive: New(t, creator, version), redactor: r}
}

// Recorded is the recording's start, the clock replay will use.
func (r *Recorder) Recorded() time.Time { return r.archive.Recorded() }

// Add records one exchange.
func (r *Recorder) Add(x Exchange) {
	e := entryOf(x)
	vals := r.redactor.secretValues(e)
	r.redactor.Entry(e)
	// What the HAR redacts, no other output writes either, and the HAR
	// holds it nowhere else: not in a body the server echoed it into.
	redact.Secret(vals...)
	r.redactor.scrubEntry(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archive.Log.Entries = append(r.archive.Log.Entries, e)
	r.seqs = append(r.seqs, x.Seq)
}

// Secret redacts what was typed into a password field from the
// recording: the field, by its name (when it has one) and by its value,
// in every request body, and the value wherever a response echoes it.
// Call it before the value can be sent.
func (r *Recorder) Secret(field, value string) {
	if r.redactor == nil || value == "" {
		return
	}
	if field != "" {
		r.redactor.Add(field)
	}
	r.redactor.AddValue(value)
}

// Len is how many exchanges are recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.archive.Log.Entries)
}

// SetTitle names the recording's page.
func (r *Recorder) SetTitle(title string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archive.Log.Pages[0].Title = title
}

// Archive returns the recording with its entries in the order their
// requests were sent, which is the order replay serves duplicates in. A
// value redacted by name anywhere in it (a token in a URL, a cookie) is
// scrubbed from every response body too, where a server may have echoed
// it: no name marks it there. Every secret value known by now (one
// learned after its exchange was added, such as a cookie the page set)
// is scrubbed from every entry again.
func (r *Recorder) Archive() *Archive {
	r.mu.Lock()
	defer r.mu.Unlock()
	idx := make([]int, len(r.seqs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return r.seqs[idx[a]] < r.seqs[idx[b]] })
	entries := make([]*har.Entry, len(idx))
	for i, j := range idx {
		e := r.archive.Log.Entries[j]
		r.redactor.scrubEntry(e)
		entries[i] = e
	}
	log := *r.archive.Log
	log.Entries = entries
	log.Pages = nil
	for _, pg := range r.archive.Log.Pages {
		c := *pg
		c.Title = r.redactor.values(c.Title)
		log.Pages = append(log.Pages, &c)
	}
	return &Archive{Log: &log}
}

func entryOf(x Exchange) *har.Entry {
	ms := float64(x.Duration.Microseconds()) / 1000
	req := &har.Request{
		Method:      x.Method,
		URL:         x.URL,
		HTTPVersion: "HTTP/1.1",
		HeadersSize: -1,
		BodySize:    int64(len(x.RequestBody)),
		// HAR readers expect lists, never null.
		Cookies:     []*har.Cookie{},
		Headers:     []*har.NameValuePair{},
		QueryString: []*har.NameValuePair{},
	}
	names := make([]string, 0, len(x.RequestHeaders))
	for k := range x.RequestHeaders {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		req.Headers = append(req.Headers, &har.NameValuePair{Name: k, Value: x.RequestHeaders[k]})
	}
	if pu, err := url.Parse(x.URL); err == nil {
		for _, kv := range strings.Split(pu.RawQuery, "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			k, _ = url.QueryUnescape(k)
			v, _ = url.QueryUnescape(v)
			req.QueryString = append(req.QueryString, &har.NameValuePair{Name: k, Value: v})
		}
	}
	if len(x.RequestBody) > 0 {
		req.PostData = &har.PostData{MimeType: headerValue(x.RequestHeaders, "content-type"), Text: string(x.RequestBody), Params: []*har.Param{}}
	}
	status := x.StatusText
	if status == "" {
		status = http.StatusText(x.Status)
	}
	resp := &har.Response{
		Status:      int64(x.Status),
		StatusText:  status,
		HTTPVersion: "HTTP/1.1",
		HeadersSize: -1,
		BodySize:    int64(len(x.Body)),
		Content:     &har.Content{Size: int64(len(x.Body)), Text: x.Body},
		Cookies:     []*har.Cookie{},
		Headers:     []*har.NameValuePair{},
	}
	for _, h := range x.ResponseHeaders {
		resp.Headers = append(resp.Headers, &har.NameValuePair{Name: h.Name, Value: h.Value})
		switch strings.ToLower(h.Name) {
		case "content-type":
			resp.Content.MimeType = h.Value
		case "location":
			if base, err := url.Parse(x.URL); err == nil {
				if loc, err := base.Parse(h.Value); err == nil {
					resp.RedirectURL = loc.String()
				}
			}
		}
	}
	return &har.Entry{
		StartedDateTime: x.Started.UTC().Format(time.RFC3339Nano),
		Time:            ms,
		Request:         req,
		Response:        resp,
		Cache:           &har.Cache{},
		Timings:         &har.Timings{Send: 0, Wait: ms, Receive: 0},
		Pageref:         "page_1",
	}
}

// ResponseHeaders is what replay sends back for an entry: the recorded
// headers without those that described the wire form (the body is stored
// decoded) and without redacted ones.
func ResponseHeaders(e *har.Entry) []Header {
	var out []Header
	for _, h := range e.Response.Headers {
		if h == nil {
			continue
		}
		switch strings.ToLower(h.Name) {
		case "content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive":
			continue
		}
		if h.Value == Redacted {
			continue
		}
		out = append(out, Header{h.Name, h.Value})
	}
	return out
}
