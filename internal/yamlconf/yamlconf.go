// Package yamlconf decodes YAML files strictly and reports every problem as
// file:line: field: what is wrong, so a user can go straight to the line.
package yamlconf

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/internal/safefile"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Error is a problem in a YAML file.
type Error struct {
	File  string // as given by the caller
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path such as deployments[1].tpm; empty for syntax errors
	Msg   string

	// For an unknown field: its path (such as steps[1].txet) and the
	// keys accepted where it is written.
	Unknown string
	Accepts []string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Doc is a decoded file, kept so later checks can point at a line.
type Doc struct {
	File   string
	ast    *ast.File
	prefix string // see Sub
}

// Sub is the part of the file at prefix (such as tasks[2]): its Errorf,
// Line and Has take paths within that part, and name the whole path.
func (d *Doc) Sub(prefix string) *Doc {
	return &Doc{File: d.File, ast: d.ast, prefix: d.join(prefix)}
}

func (d *Doc) join(field string) string {
	switch {
	case d.prefix == "":
		return field
	case field == "" || strings.HasPrefix(field, "["):
		return d.prefix + field
	}
	return d.prefix + "." + field
}

// Has says whether the file writes path (such as steps[2].agent), even
// with no value.
func (d *Doc) Has(path string) bool {
	if d == nil || d.ast == nil {
		return false
	}
	p, err := yaml.PathString(d.root(d.join(path)))
	if err != nil {
		return false
	}
	n, err := p.FilterFile(d.ast)
	return err == nil && n != nil
}

func (d *Doc) root(p string) string {
	if strings.HasPrefix(p, "[") {
		return "$" + p // a file that is a list at the top
	}
	return "$." + p
}

// MaxNesting bounds how deep a file nests. A config or a task is two or
// three levels deep; the YAML parser's time grows with the square of the
// depth, so deeper input is refused before it is parsed.
const MaxNesting = 100

// maxQuote bounds how much of the input a message quotes.
const maxQuote = 80

var bom = []byte("\xef\xbb\xbf")

// Decode reads data into v, refusing unknown fields (the first one in the
// file is reported), duplicate keys, a second document and input nested
// deeper than MaxNesting. A leading UTF-8 byte order mark is dropped. A
// value of the wrong type is reported with the field it is written in.
func Decode(file string, data []byte, v any) (doc *Doc, err error) {
	data = bytes.TrimPrefix(data, bom)
	if err := checkNesting(file, data); err != nil {
		return nil, err
	}
	// Some malformed inputs (a tag on a sequence) panic inside the YAML
	// library; they are bad input like any other.
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, &Error{File: file, Msg: fmt.Sprintf("the YAML decoder failed on this file (%v): look for a tag (!name) or anchor in an unusual place", p)}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, wrap(file, err)
	}
	if err := checkAliases(file, f); err != nil {
		return nil, err
	}
	if len(f.Docs) > 1 {
		line := 0
		if d := f.Docs[1]; d.Start != nil && d.Start.Position != nil {
			line = d.Start.Position.Line
		} else if d.Body != nil {
			line = nodeLine(d.Body)
		}
		return nil, &Error{File: file, Line: line, Msg: "a second YAML document: the file holds one (drop the ---)"}
	}
	if err := yaml.UnmarshalWithOptions(data, v, yaml.DisallowUnknownField()); err != nil {
		e := wrap(file, err)
		if len(f.Docs) == 0 || f.Docs[0].Body == nil {
			return nil, e
		}
		body := f.Docs[0].Body
		if u := firstUnknown(body, reflect.TypeOf(v), "", 0); u != nil {
			return nil, &Error{File: file, Line: u.line, Msg: "unknown field " + Quote(u.key), Unknown: u.path, Accepts: u.accepts}
		}
		if e.Line > 0 && e.Field == "" {
			e.Field = FieldAt(body, e.Line)
		}
		return nil, e
	}
	return &Doc{File: file, ast: f}, nil
}

// Quote quotes s for a message, cut to 80 characters: a message names
// what is wrong, it does not echo a megabyte back.
func Quote(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	n := 0
	for i := range s {
		if n == maxQuote {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}

// clip cuts a message from the YAML library, which may hold input.
func clip(s string) string {
	const max = 4 * maxQuote
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func wrap(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &Error{File: file, Line: line, Msg: clip(ye.GetMessage())}
	}
	return &Error{File: file, Msg: clip(err.Error())}
}

// Errorf returns an error about field (a path such as pools[0].tpm), at the
// line where that field, or the nearest part of it that exists, is written.
func (d *Doc) Errorf(field, format string, args ...any) error {
	return &Error{File: d.File, Line: d.Line(field), Field: d.join(field), Msg: fmt.Sprintf(format, args...)}
}

// Line is the line of field, or of its closest existing parent, or 0.
func (d *Doc) Line(field string) int {
	if d == nil || d.ast == nil {
		return 0
	}
	for p := d.join(field); p != ""; p = parent(p) {
		path, err := yaml.PathString(d.root(p))
		if err != nil {
			continue
		}
		n, err := path.FilterFile(d.ast)
		if err != nil || n == nil {
			continue
		}
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			return tk.Position.Line
		}
	}
	return 0
}

// parent strips the last .name or [i] from a path.
func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// ReadFile reads a YAML file of at most limit bytes, refusing what is not
// a regular file: a config or a task is a page of text, never a device, a
// pipe or a directory.
func ReadFile(path string, limit int64) ([]byte, error) {
	return safefile.ReadFile(path, limit, "a YAML file")
}
