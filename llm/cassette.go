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
	"slices"
	"sort"
	"strings"
	"sync"

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
	w       io.Writer                    // recording: where lines go
	secrets []string                     // scrubbed from everything recorded
	replay  map[string][]Exchange        // replaying: by key, in recorded order
	byType  map[string][]json.RawMessage // replaying: requests, for mismatch reports
}

// NewCassette records: it writes every exchange to w as a JSON line. Any of secrets
// found in a request or response is replaced before it is written; headers
// are never recorded.
func NewCassette(w io.Writer, secrets ...string) *Cassette {
	var keep []string
	for _, s := range secrets {
		if len(s) >= 4 {
			keep = append(keep, s)
		}
	}
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
// request that held a secret was recorded with it replaced: it matches
// only when secrets names it again.
func LoadCassette(r io.Reader, name string, secrets ...string) (*Cassette, error) {
	c := NewCassette(nil, secrets...)
	c.replay, c.byType = map[string][]Exchange{}, map[string][]json.RawMessage{}
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
		c.byType[x.Type] = append(c.byType[x.Type], x.Request)
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

// scrub replaces the secrets in b (a nil cassette has none).
func (c *Cassette) scrub(b []byte) []byte {
	if c == nil {
		return b
	}
	for _, s := range c.secrets {
		b = bytes.ReplaceAll(b, []byte(s), []byte(redact.Marker))
	}
	return b
}

// record writes x, scrubbed.
func (c *Cassette) record(x Exchange) error {
	if c == nil || c.w == nil {
		return nil
	}
	x.Request = c.scrub(x.Request)
	x.Response = c.scrub(x.Response)
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
// that shows how the request differs from the closest recorded one.
func (c *Cassette) answer(typ string, body []byte) (Exchange, error) {
	key := requestKey(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if xs := c.replay[key]; len(xs) > 0 {
		c.replay[key] = xs[1:]
		return xs[0], nil
	}
	recorded := c.byType[typ]
	if len(recorded) == 0 {
		return Exchange{}, fmt.Errorf("%w: no %s call was recorded", ErrReplayMismatch, typ)
	}
	best, bestN := "", -1
	for _, r := range recorded {
		diffs := jsonDiff("", decode(r), decode(body))
		if slices.Equal(r, body) {
			return Exchange{}, fmt.Errorf("%w: this %s request was recorded, but fewer times than it is now asked", ErrReplayMismatch, typ)
		}
		if bestN < 0 || len(diffs) < bestN {
			best, bestN = strings.Join(first(diffs, 3), "; "), len(diffs)
		}
	}
	return Exchange{}, fmt.Errorf("%w: the closest recorded %s request differs at %s", ErrReplayMismatch, typ, best)
}

func decode(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// jsonDiff lists where two JSON values differ, as path: recorded → now.
func jsonDiff(path string, a, b any) []string {
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
		var out []string
		for _, k := range names {
			out = append(out, jsonDiff(join(path, k), x[k], y[k])...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		var out []string
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
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return nil
	}
	return []string{fmt.Sprintf("%s: recorded %s, now %s", cmpPath(path), clip(ja), clip(jb))}
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

// clip shortens a JSON value for a message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}
