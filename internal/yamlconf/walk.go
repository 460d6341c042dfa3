package yamlconf

import (
	"encoding"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// checkNesting refuses input nested deeper than MaxNesting, from the
// tokens alone (linear in the input), before the parser sees it. Block
// depth is counted by indentation: a key or item deeper than the one
// before it opens a level.
func checkNesting(file string, data []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &Error{File: file, Msg: fmt.Sprintf("the YAML scanner failed on this file (%v)", p)}
		}
	}()
	type level struct {
		col int
		key bool
	}
	var (
		flow  int
		block []level
		prev  *token.Token
	)
	for _, tk := range lexer.Tokenize(string(data)) {
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.SequenceEntryType, token.MappingValueType:
			if flow > 0 {
				break
			}
			l := level{col: tk.Position.Column, key: tk.Type == token.MappingValueType}
			if l.key && prev != nil && prev.Position != nil {
				l.col = prev.Position.Column
			}
			// A key or item at a column closes what is deeper; at the same
			// column, only a list under a key stays open.
			for len(block) > 0 {
				top := block[len(block)-1]
				if top.col < l.col || top.col == l.col && top.key && !l.key {
					break
				}
				block = block[:len(block)-1]
			}
			block = append(block, l)
		}
		if flow+len(block) > MaxNesting {
			line := 0
			if tk.Position != nil {
				line = tk.Position.Line
			}
			return &Error{File: file, Line: line, Msg: fmt.Sprintf("nested more than %d levels deep: a file like this is a few levels of fields and lists", MaxNesting)}
		}
		prev = tk
	}
	return nil
}

// FieldAt is the path (such as steps[2].txet) of the deepest key or item
// under n that holds line, or "" when that cannot be told.
func FieldAt(n ast.Node, line int) string { return fieldAt(n, "", line, 0) }

// fieldAt is FieldAt below path; it returns path when the line cannot be
// told apart (several items written on it).
func fieldAt(n ast.Node, path string, line, depth int) string {
	if depth > MaxNesting {
		return path
	}
	n, depth = unwrap(n, depth)
	switch v := n.(type) {
	case *ast.MappingNode:
		lines := make([]int, len(v.Values))
		for i, mv := range v.Values {
			lines[i] = nodeLine(mv.Key)
		}
		best, ok := holding(lines, line)
		if !ok {
			return path
		}
		key, ok := plainKeyOf(v.Values[best])
		if !ok {
			return path
		}
		if path != "" {
			key = path + "." + key
		}
		return fieldAt(v.Values[best].Value, key, line, depth+1)
	case *ast.SequenceNode:
		lines := make([]int, len(v.Values))
		for i, item := range v.Values {
			lines[i] = nodeLine(item)
		}
		best, ok := holding(lines, line)
		if !ok {
			return path
		}
		return fieldAt(v.Values[best], fmt.Sprintf("%s[%d]", path, best), line, depth+1)
	}
	return path
}

// holding is the entry, of those starting on the given lines, whose span
// holds line: the last to start on or before it. It is not found when
// none does, or when two start on that one line (a flow list).
func holding(lines []int, line int) (int, bool) {
	best, bestLine, tie := -1, 0, false
	for i, l := range lines {
		switch {
		case l == 0 || l > line:
		case l == bestLine:
			tie = true
		default:
			best, bestLine, tie = i, l, false
		}
	}
	return best, best >= 0 && !tie
}

// unwrap looks through tags and anchors to the node they mark, and reads a
// lone key: value as a mapping of one; depth counts the layers passed.
func unwrap(n ast.Node, depth int) (ast.Node, int) {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n, depth = v.Value, depth+1
		case *ast.AnchorNode:
			n, depth = v.Value, depth+1
		case *ast.MappingValueNode:
			return &ast.MappingNode{Values: []*ast.MappingValueNode{v}}, depth
		default:
			return n, depth
		}
		if depth > MaxNesting {
			return nil, depth
		}
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func plainKeyOf(mv *ast.MappingValueNode) (string, bool) {
	k, ok := mv.Key.(*ast.StringNode)
	if !ok || !plainKey.MatchString(k.Value) {
		return "", false
	}
	return k.Value, true
}

// nodeLine is the line a node starts on, or 0.
func nodeLine(n ast.Node) int {
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 {
		return nodeLine(m.Values[0].Key)
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		return nodeLine(mv.Key)
	}
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// unknown is a key the type it is decoded into does not have.
type unknown struct {
	key, path string
	line      int
	accepts   []string
}

var (
	textUnmarshaler  = reflect.TypeFor[encoding.TextUnmarshaler]()
	bytesUnmarshaler = reflect.TypeFor[yaml.BytesUnmarshaler]()
	nodeUnmarshaler  = reflect.TypeFor[yaml.NodeUnmarshaler]()
	ifaceUnmarshaler = reflect.TypeFor[yaml.InterfaceUnmarshaler]()
)

// firstUnknown walks n beside the type t it decodes into, in file order,
// and returns the first key t does not have, or nil. The YAML library
// reports an unknown key after the keys it found inside others, so its
// choice is not the first in the file.
func firstUnknown(n ast.Node, t reflect.Type, path string, depth int) *unknown {
	if n == nil || t == nil || depth > MaxNesting {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if pt := reflect.PointerTo(t); pt.Implements(textUnmarshaler) || pt.Implements(bytesUnmarshaler) ||
		pt.Implements(nodeUnmarshaler) || pt.Implements(ifaceUnmarshaler) {
		return nil
	}
	n, depth = unwrap(n, depth)
	switch v := n.(type) {
	case *ast.MappingNode:
		switch t.Kind() {
		case reflect.Struct:
			fields := map[string]reflect.Type{}
			var names []string
			if !structFields(t, fields, &names, 0) {
				return nil // an inline map takes any key
			}
			for _, mv := range v.Values {
				k, ok := mv.Key.(*ast.StringNode)
				if !ok || k.Value == "<<" {
					continue
				}
				p := k.Value
				if plainKey.MatchString(p) {
					if path != "" {
						p = path + "." + p
					}
				} else {
					p = path
				}
				ft, known := fields[k.Value]
				if !known {
					return &unknown{key: k.Value, path: p, line: nodeLine(mv.Key), accepts: names}
				}
				if u := firstUnknown(mv.Value, ft, p, depth+1); u != nil {
					return u
				}
			}
		case reflect.Map:
			for _, mv := range v.Values {
				p := path
				if k, ok := plainKeyOf(mv); ok {
					p = strings.TrimPrefix(path+"."+k, ".")
				}
				if u := firstUnknown(mv.Value, t.Elem(), p, depth+1); u != nil {
					return u
				}
			}
		}
	case *ast.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil
		}
		for i, item := range v.Values {
			if u := firstUnknown(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), depth+1); u != nil {
				return u
			}
		}
	}
	return nil
}

// structFields lists the keys a struct accepts, inline structs included,
// as the YAML library names them. It is false when the struct takes any
// key (an inline map).
func structFields(t reflect.Type, fields map[string]reflect.Type, names *[]string, depth int) bool {
	if depth > 10 {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-" || !f.IsExported():
		case strings.Contains(","+opts+",", ",inline,"):
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() != reflect.Struct || !structFields(ft, fields, names, depth+1) {
				return false
			}
		default:
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if _, dup := fields[name]; !dup {
				*names = append(*names, name)
			}
			fields[name] = f.Type
		}
	}
	return true
}
