// Package replay keeps recorded pages: HAR 1.2 archives written by the
// recorder and read back to answer a browser's requests offline.
//
// The browser package does the DevTools work (pausing requests, fulfilling
// them); this package holds the data and the decisions: what an entry
// looks like on disk, which entry answers a request, and what is secret.
package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/har"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// Archive is one recorded site: the HAR log and the time it was recorded,
// which replay uses as the page's clock.
type Archive struct {
	Log *har.Log
	// Source is where the archive was read from: Load's path, Decode's
	// name. Empty for one made in memory. It is not written.
	Source string
}

// New returns an empty archive recorded at t, made by creator (name/version).
func New(t time.Time, creator, version string) *Archive {
	return &Archive{Log: &har.Log{
		Version: "1.2",
		Creator: &har.Creator{Name: creator, Version: version},
		Pages: []*har.Page{{
			StartedDateTime: t.UTC().Format(time.RFC3339Nano),
			ID:              "page_1",
			PageTimings:     &har.PageTimings{},
		}},
	}}
}

// Recorded is when the archive was recorded: its first page's start, or
// its first entry's when it has no pages. The zero time when neither parses.
func (a *Archive) Recorded() time.Time {
	if a == nil || a.Log == nil {
		return time.Time{}
	}
	var s string
	if len(a.Log.Pages) > 0 && a.Log.Pages[0] != nil {
		s = a.Log.Pages[0].StartedDateTime
	} else if len(a.Log.Entries) > 0 && a.Log.Entries[0] != nil {
		s = a.Log.Entries[0].StartedDateTime
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

const (
	// MaxFile bounds what Load reads: a recorded site with its bodies is
	// megabytes, and a file past this is a mistake (or /dev/zero).
	MaxFile = 512 << 20
	// maxDepth bounds how deep a HAR file nests; HAR is a few levels.
	maxDepth = 64
)

// Load reads a HAR file: a regular file of at most MaxFile bytes.
func Load(path string) (*Archive, error) {
	data, err := safefile.ReadFile(path, MaxFile, "a HAR file")
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode parses a HAR document; name is used in errors (a file name).
// Every entry must have a request with a method and a URL, and a response
// with a status; anything else is an error naming the entry.
func Decode(name string, data []byte) (*Archive, error) {
	if err := safefile.CheckJSONDepth(data, maxDepth); err != nil {
		return nil, fmt.Errorf("%s: %v: a HAR file is a few levels of objects and lists", name, err)
	}
	var doc struct {
		Log *har.Log `json:"log"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %s", name, jsonProblem(data, err))
	}
	if doc.Log == nil {
		return nil, fmt.Errorf("%s: not a HAR file: no \"log\" object at the top", name)
	}
	for i, e := range doc.Log.Entries {
		switch {
		case e == nil:
			return nil, fmt.Errorf("%s: log.entries[%d]: null entry", name, i)
		case e.Request == nil || e.Request.Method == "" || e.Request.URL == "":
			return nil, fmt.Errorf("%s: log.entries[%d].request: needs a method and a url", name, i)
		case e.Response == nil || e.Response.Status < 100 || e.Response.Status > 999:
			return nil, fmt.Errorf("%s: log.entries[%d].response.status: needs an HTTP status (100-999)", name, i)
		}
		if e.Response.Content == nil {
			e.Response.Content = &har.Content{}
		}
	}
	return &Archive{Log: doc.Log, Source: name}, nil
}

// jsonProblem turns a decode error into a line:column message.
func jsonProblem(data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		if te.Field != "" {
			return fmt.Sprintf("%s: %s: %s is %s, want %s", position(data, off), te.Field, te.Field, te.Value, te.Type)
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the file ends early (truncated JSON)"
	}
	if off < 0 {
		return err.Error()
	}
	return position(data, off) + ": " + err.Error()
}

func position(data []byte, off int64) string {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// Write writes the archive as indented HAR JSON. Text bodies are written as
// text; binary bodies as base64 with "encoding": "base64".
func (a *Archive) Write(w io.Writer) error {
	entries := make([]entryJSON, len(a.Log.Entries))
	for i, e := range a.Log.Entries {
		entries[i] = entryJSON{Entry: e, Response: responseJSON{Response: e.Response, Content: contentOf(e.Response.Content)}}
		if e.Cache == nil {
			e.Cache = &har.Cache{} // some HAR readers refuse "cache": null
		}
	}
	doc := struct {
		Log logJSON `json:"log"`
	}{logJSON{Log: a.Log, Entries: entries}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// WriteFile writes the archive to path through a temporary file in the
// same directory, so a crash never leaves half a HAR where a good one was.
// path must be new or a regular file: a device, a directory or a symlink
// is refused, and nothing is left beside it.
func (a *Archive) WriteFile(path string) error {
	return safefile.WriteFile(path, 0o644, a.Write)
}

// The har types hold bodies as bytes, which encoding/json would write as
// base64 with no "encoding" field; these wrappers write them as HAR says.
type logJSON struct {
	*har.Log
	Entries []entryJSON `json:"entries"`
}

type entryJSON struct {
	*har.Entry
	Response responseJSON `json:"response"`
}

type responseJSON struct {
	*har.Response
	Content contentJSON `json:"content"`
}

type contentJSON struct {
	Size        int64  `json:"size"`
	Compression *int64 `json:"compression,omitempty"`
	MimeType    string `json:"mimeType"`
	Text        string `json:"text,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Comment     string `json:"comment,omitempty"`
}

func contentOf(c *har.Content) contentJSON {
	if c == nil {
		return contentJSON{}
	}
	out := contentJSON{Size: c.Size, Compression: c.Compression, MimeType: c.MimeType, Comment: c.Comment}
	if len(c.Text) == 0 {
		return out
	}
	if IsText(c.MimeType, c.Text) {
		out.Text = string(c.Text)
	} else {
		out.Text = base64.StdEncoding.EncodeToString(c.Text)
		out.Encoding = "base64"
	}
	return out
}

// IsText says whether a body of this MIME type can be stored as text: a
// textual type whose bytes are valid UTF-8.
func IsText(mime string, body []byte) bool {
	m := strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	textual := strings.HasPrefix(m, "text/") ||
		strings.HasSuffix(m, "+json") || strings.HasSuffix(m, "+xml") ||
		m == "application/json" || m == "application/javascript" || m == "application/x-javascript" ||
		m == "application/ecmascript" || m == "application/xml" || m == "application/x-www-form-urlencoded" ||
		m == "image/svg+xml" || m == "application/manifest+json"
	return textual && utf8.Valid(body)
}
