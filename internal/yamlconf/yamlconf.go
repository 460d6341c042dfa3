// Package yamlconf decodes YAML files strictly and reports every problem as
// file:line: field: what is wrong, so a user can go straight to the line.
package yamlconf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
	File string
	ast  *ast.File
}

// Decode reads data into v, refusing unknown fields (duplicate keys are refused by the parser).
func Decode(file string, data []byte, v any) (doc *Doc, err error) {
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
	if err := yaml.UnmarshalWithOptions(data, v, yaml.DisallowUnknownField()); err != nil {
		return nil, wrap(file, err)
	}
	return &Doc{File: file, ast: f}, nil
}

func wrap(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &Error{File: file, Line: line, Msg: ye.GetMessage()}
	}
	return &Error{File: file, Msg: err.Error()}
}

// Errorf returns an error about field (a path such as pools[0].tpm), at the
// line where that field, or the nearest part of it that exists, is written.
func (d *Doc) Errorf(field, format string, args ...any) error {
	return &Error{File: d.File, Line: d.Line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Line is the line of field, or of its closest existing parent, or 0.
func (d *Doc) Line(field string) int {
	if d == nil || d.ast == nil {
		return 0
	}
	for p := field; p != ""; p = parent(p) {
		root := "$."
		if strings.HasPrefix(p, "[") {
			root = "$" // a file that is a list at the top
		}
		path, err := yaml.PathString(root + p)
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
// pipe or a directory. The checks come before the open, since opening a
// FIFO waits for a writer; the read stops one byte past the limit in case
// the file grew since.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: want a YAML file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes: at most %d are read", path, fi.Size(), limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes: at most %d are read", path, limit, limit)
	}
	return data, nil
}
