package llm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// Exchange is one request and its answer as a cassette keeps it, a JSON
// line: the request's Report beside the bodies.
type Exchange struct {
	Report
	// Key identifies the request: a hash of its body without the model
	// (the deployment depends on routing, the answer should not).
	Key      string          `json:"key"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// Cassette records model exchanges, or answers from recorded ones. With
// recorded pages, a cassette makes a whole agent run reproducible with no
// network and no Azure.
type Cassette struct {
	mu      sync.Mutex
	w       io.Writer             // recording: where lines go
	secrets []string              // scrubbed from everything recorded
	replay  map[string][]Exchange // replaying: by key, in recorded order
	byType  map[string][]recorded // replaying: requests, for near matches and mismatch reports
	name    string                // replaying: the file's name, for mismatch reports
}

// NewCassette records: it writes every exchange to w as a JSON line. Any of secrets
// found in a request or response is replaced before it is written, and so
// is every secret value the process knows (redact.Secret; secrets join it as keys,
// found in pieces too: redact.Key); headers are never recorded.
func NewCassette(w io.Writer, secrets ...string) *Cassette {
	var keep []string
	for _, s := range secrets {
		if len(s) >= redact.MinValue {
			keep = append(keep, s)
		}
	}
	redact.Key(keep...)
	return &Cassette{w: w, secrets: keep}
}

const (
	// maxCassette bounds what LoadCassette reads: a run's calls are
	// megabytes at most.
	maxCassette = 256 << 20
	// maxCassetteDepth bounds how deep a cassette line nests: a request
	// and its answer are a few levels of JSON.
	maxCassetteDepth = 64
)

// LoadCassette reads a recorded cassette for replay; name is for errors.
// It reads at most 256 MB, lines nested at most 64 levels deep.
// Repeated identical requests get their recorded answers in order. A
// request that held one of the recording's secrets was recorded with it
// replaced: it matches when secrets names it again (Open passes the keys
// its config's deployments name), and else when the live request has one
// word where the recording has the marker. Secret-named JSON keys match
// whatever their value.
func LoadCassette(r io.Reader, name string, secrets ...string) (*Cassette, error) {
	c := NewCassette(nil, secrets...)
	c.replay, c.byType, c.name = map[string][]Exchange{}, map[string][]recorded{}, filepath.Base(name)
	lr := &io.LimitedReader{R: r, N: maxCassette + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if lr.N <= 0 {
			return nil, fmt.Errorf("%s: over %d bytes: at most %d are read", name, maxCassette, maxCassette)
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := checkDepth(sc.Bytes(), maxCassetteDepth); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		var x Exchange
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("%s:%d: not a cassette line: %v", name, line, err)
		}
		if x.Type == "" || x.Key == "" || len(x.Response) == 0 {
			return nil, fmt.Errorf("%s:%d: a cassette line needs type, key and response", name, line)
		}
		c.replay[x.Key] = append(c.replay[x.Key], x)
		c.byType[x.Type] = append(c.byType[x.Type], recorded{x.Key, x.Request, line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("%s: over %d bytes: at most %d are read", name, maxCassette, maxCassette)
	}
	return c, nil
}

// checkDepth refuses a JSON line nested deeper than max.
func checkDepth(line []byte, max int) error {
	if err := safefile.CheckJSONDepth(line, max); err != nil {
		return fmt.Errorf("not a cassette line: %v", err)
	}
	return nil
}

// RecordTo makes a replaying cassette write every exchange it answers to
// w as well: replaying a recording this way reproduces it byte for byte.
func (c *Cassette) RecordTo(w io.Writer) { c.w = w }

// Replaying reports whether c answers from a recording.
func (c *Cassette) Replaying() bool { return c != nil && c.replay != nil }

// requestKey hashes a request body.
func requestKey(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:16])
}

// scrub readies a request body for the cassette: the cassette's secrets
// replaced wherever they are, and the values of secret-named JSON keys
// (redact.IsSecretName) too. A request is recorded scrubbed and keyed by
// its scrubbed body, and a live request is scrubbed the same way before
// it is looked up, so a request that held a secret matches again.
func (c *Cassette) scrub(b []byte) []byte {
	b = c.scrubSecrets(b)
	if r, changed := (*redact.Names)(nil).JSON(b); changed {
		b = r
	}
	return b
}

// scrubSecrets replaces the cassette's secrets in b (a nil cassette has
// none), and applies the rule every output keeps (redact.Bytes): the
// process's secret values and secret URL parameters.
func (c *Cassette) scrubSecrets(b []byte) []byte {
	if c != nil {
		for _, s := range c.secrets {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redact.Marker))
		}
	}
	return redact.Bytes(b)
}

// record writes x, scrubbed: its request as scrub does, its response of
// the cassette's secrets (a response's keys are the model's to name).
func (c *Cassette) record(x Exchange) error {
	if c == nil || c.w == nil {
		return nil
	}
	x.Request = c.scrub(x.Request)
	x.Response = c.scrubSecrets(x.Response)
	line, err := json.Marshal(x)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(append(line, '\n'))
	return err
}

// ErrReplayMismatch is wrapped by the error for a request the cassette did
// not record.
var ErrReplayMismatch = errors.New("the cassette has no recorded answer for this request")

// answer returns the next recorded exchange for the request, or an error
// that shows how the request differs from the closest recorded one. It
// scrubs body itself (scrubbing twice is scrubbing once), so neither the
// key nor the error ever sees a secret.
func (c *Cassette) answer(typ string, body []byte) (Exchange, error) {
	body = c.scrub(body)
	key := requestKey(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if xs := c.replay[key]; len(xs) > 0 {
		c.replay[key] = xs[1:]
		return xs[0], nil
	}
	recs := c.byType[typ]
	if len(recs) == 0 {
		return Exchange{}, fmt.Errorf("%w: no %s call was recorded in %s", ErrReplayMismatch, typ, c.name)
	}
	// No recorded request has these bytes. One may still be this request:
	// the same JSON written otherwise, or one that held a secret this
	// process does not know (a replay with no key): where the recording
	// has the marker, the live request's word there is taken for the
	// secret, and is not printed either.
	live := decode(body)
	var best []fieldDiff
	var bestAt recorded
	bestShared := 0
	for _, r := range recs {
		rv := decode(r.req)
		diffs := jsonDiff("", rv, unmask(rv, live))
		if len(diffs) == 0 {
			if xs := c.replay[r.key]; len(xs) > 0 {
				c.replay[r.key] = xs[1:]
				return xs[0], nil
			}
			return Exchange{}, fmt.Errorf("%w: this %s request was recorded (%s:%d), but fewer times than it is now asked", ErrReplayMismatch, typ, c.name, r.line)
		}
		// The fewest values differing, and among those the most text in
		// common before each difference.
		if shared := sharedBefore(diffs); best == nil || len(diffs) < len(best) || len(diffs) == len(best) && shared > bestShared {
			best, bestAt, bestShared = diffs, r, shared
		}
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "the closest recorded %s request (%s:%d) differs at ", typ, c.name, bestAt.line)
	for i, d := range first(best, 3) {
		if i > 0 {
			msg.WriteString("\nand at ")
		}
		msg.WriteString(d.String())
	}
	switch more := len(best) - 3; {
	case more == 1:
		msg.WriteString("\nand in 1 more place")
	case more > 1:
		fmt.Fprintf(&msg, "\nand in %d more places", more)
	}
	return Exchange{}, fmt.Errorf("%w: %s", ErrReplayMismatch, c.scrubSecrets([]byte(msg.String())))
}

// recorded is a recorded request, its key and its line in the cassette.
type recorded struct {
	key  string
	req  json.RawMessage
	line int
}

// unmask returns live with every string that matches rec's but for
// secrets rec has as the marker taken as rec's, at any depth and inside
// strings that are JSON documents.
func unmask(rec, live any) any {
	switch r := rec.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := make(map[string]any, len(l))
		for k, v := range l {
			out[k] = unmask(r[k], v)
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live
		}
		out := make([]any, len(l))
		for i, v := range l {
			var ri any
			if i < len(r) {
				ri = r[i]
			}
			out[i] = unmask(ri, v)
		}
		return out
	case string:
		l, ok := live.(string)
		if !ok || !strings.Contains(r, redact.Marker) {
			return live
		}
		if masks(r, l) {
			return r
		}
		dr, dl := jsonDoc(r), jsonDoc(l)
		if dr == nil || dl == nil {
			return live
		}
		b, err := json.Marshal(unmask(dr, dl))
		if err != nil {
			return live
		}
		return string(b)
	}
	return live
}

// masks reports whether live is rec with each marker standing for one
// word (no space, quote or backslash).
func masks(rec, live string) bool {
	parts := strings.Split(rec, redact.Marker)
	s, ok := strings.CutPrefix(live, parts[0])
	if !ok {
		return false
	}
	for i, p := range parts[1:] {
		var gap string
		if i == len(parts)-2 { // the last part ends live
			if !strings.HasSuffix(s, p) || len(s) == len(p) {
				return false
			}
			gap, s = s[:len(s)-len(p)], ""
		} else {
			j := strings.Index(s, p)
			if p == "" || j <= 0 {
				return false
			}
			gap, s = s[:j], s[j+len(p):]
		}
		if strings.ContainsAny(gap, " \t\r\n\"\\") {
			return false
		}
	}
	return true
}

// jsonDoc decodes a string that is a JSON object or array, or a call's
// input written as sections (calltypes.Message), else nil.
func jsonDoc(s string) any {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil
	}
	if t[0] != '{' && t[0] != '[' {
		raw, err := calltypes.ReadMessage(s)
		if err != nil {
			return nil
		}
		t = string(raw)
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return nil
	}
	return v
}

func decode(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// fieldDiff is one place two requests differ: the path of a value and
// the value each has, as a string's text or a JSON value's.
type fieldDiff struct {
	path          string
	recorded, now string
	strings       bool // both are strings: recorded and now are their text
}

// diffContext is how many characters a mismatch shows on each side of
// the first difference.
const diffContext = 40

// String shows where the values first differ, with what surrounds it on
// each side, one above the other:
//
//	messages[1].content.page.text, from byte 1234:
//	    recorded: …Stock: the oak desk is in stock (checked today)…
//	    now:      …Stock: the oak desk is sold out (checked today)…
//	                                      ^
func (d fieldDiff) String() string {
	at := firstDiff(d.recorded, d.now, diffContext)
	where := fmt.Sprintf("from byte %d", at.Offset)
	if !d.strings {
		where += " of its JSON"
	}
	// A secret the process does not know, where the recording has the
	// marker, is no word of the recording: past the difference, a long
	// word of the live request that the recorded value lacks is not shown,
	// nor the start of one the cut falls in.
	if strings.Contains(d.recorded, redact.Marker) {
		at.B = hideNew(at.B, d.recorded, at.CutB)
	}
	return fmt.Sprintf("%s, %s:\n%s", cmpPath(d.path), where, at.lines(d.strings, "    ", "recorded:", "now:"))
}

// sharedBefore is how many bytes the values share before their first
// differences, all told.
func sharedBefore(diffs []fieldDiff) int {
	n := 0
	for _, d := range diffs {
		for i := 0; i < len(d.recorded) && i < len(d.now) && d.recorded[i] == d.now[i]; i++ {
			n++
		}
	}
	return n
}

// hideNew replaces each word of s of 8 or more bytes that rec does not
// hold with the marker, and, when s was cut, its last word if rec does
// not hold it, however short: it may be a longer word's start.
func hideNew(s, rec string, cut bool) string {
	sep := func(r rune) bool { return strings.ContainsRune(" \t\r\n\"\\,;:=&?()[]{}<>'", r) }
	words := strings.FieldsFunc(s, sep)
	if cut && len(words) > 0 {
		last := words[len(words)-1]
		if r, _ := utf8.DecodeLastRuneInString(s); !sep(r) && !strings.Contains(rec, last) {
			s = strings.TrimSuffix(s, last) + redact.Marker
		}
	}
	for _, w := range words {
		if len(w) >= 8 && !strings.Contains(rec, w) {
			s = strings.ReplaceAll(s, w, redact.Marker)
		}
	}
	return s
}

// jsonDiff lists where two JSON values differ, recorded (a) against now
// (b), in path order.
func jsonDiff(path string, a, b any) []fieldDiff {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []fieldDiff
		for _, k := range names {
			out = append(out, jsonDiff(join(path, k), x[k], y[k])...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		var out []fieldDiff
		for i := range max(len(x), len(y)) {
			var ai, bi any
			if i < len(x) {
				ai = x[i]
			}
			if i < len(y) {
				bi = y[i]
			}
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), ai, bi)...)
		}
		return out
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			if sa == sb {
				return nil
			}
			// A call's input travels as JSON text: say where in it.
			if da, db := jsonDoc(sa), jsonDoc(sb); da != nil && db != nil {
				return jsonDiff(path, da, db)
			}
			return []fieldDiff{{path: path, recorded: sa, now: sb, strings: true}}
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return nil
	}
	return []fieldDiff{{path: path, recorded: string(ja), now: string(jb)}}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func cmpPath(p string) string {
	if p == "" {
		return "(the whole request)"
	}
	return p
}
