package yamlconf

import (
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// AsWritten is the number or boolean at path as the file writes it, and
// whether there is one there. A field of text that reads one takes the
// YAML library's rendering of the number (0042 becomes "34", 1.50 "1.5",
// even with !!str), not what the user typed; the caller takes this
// instead.
func (d *Doc) AsWritten(path string) (string, bool) {
	if d == nil || d.ast == nil {
		return "", false
	}
	p, err := yaml.PathString(d.root(d.join(path)))
	if err != nil {
		return "", false
	}
	n, err := p.FilterFile(d.ast)
	if err != nil || n == nil {
		return "", false
	}
	n, _ = unwrap(n, 0)
	switch n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}
