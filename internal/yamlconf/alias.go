package yamlconf

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// MaxValues bounds how many values a file holds once its aliases are
// expanded. An alias (*name) stands for the whole value its anchor
// (&name) marks, so a few hundred bytes of aliases to aliases can stand
// for billions of values, which the decoder would build one by one. A
// task list of a thousand tasks is some tens of thousands; the bound is
// far above any file written by hand, and is reached in well under a
// second and a few hundred megabytes.
const MaxValues = 1_000_000

// checkAliases counts the values of a parsed file as its aliases expand
// them, without expanding anything, and refuses a file past MaxValues,
// naming the line of the alias that crossed it.
func checkAliases(file string, f *ast.File) error {
	c := aliasCounter{anchors: map[string]int64{}}
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		c.total = c.add(c.total, c.count(d.Body))
		if c.total > MaxValues {
			line := 0
			if c.at != nil {
				line = nodeLine(c.at)
			}
			return &Error{File: file, Line: line, Msg: fmt.Sprintf("its aliases expand to more than %d values: write the values out, or use fewer aliases of aliases", MaxValues)}
		}
	}
	return nil
}

type aliasCounter struct {
	anchors map[string]int64 // each anchor's value, counted as it expands
	total   int64
	last    ast.Node // the last alias counted
	at      ast.Node // the alias a count first passed MaxValues at
}

// count is how many values n stands for, aliases expanded, saturating
// just past MaxValues. Anchors are counted in document order, as the
// decoder resolves them: an alias names the last anchor of its name
// before it.
func (c *aliasCounter) count(n ast.Node) int64 {
	switch v := n.(type) {
	case nil:
		return 0
	case *ast.MappingNode:
		return countAll(c, v.Values)
	case *ast.MappingValueNode:
		return c.add(c.count(v.Key), c.count(v.Value))
	case *ast.MappingKeyNode:
		return c.count(v.Value)
	case *ast.SequenceNode:
		return countAll(c, v.Values)
	case *ast.TagNode:
		return c.count(v.Value)
	case *ast.AnchorNode:
		size := c.count(v.Value)
		if v.Name != nil {
			c.anchors[v.Name.String()] = size
		}
		return size
	case *ast.AliasNode:
		size := int64(1)
		if v.Value != nil {
			if s, ok := c.anchors[v.Value.String()]; ok {
				size = s
			}
		}
		c.last = v
		return c.add(size, 0)
	}
	return 1
}

// countAll counts a collection: itself, and what each of its nodes
// stands for.
func countAll[N ast.Node](c *aliasCounter, nodes []N) int64 {
	sum := int64(1)
	for _, n := range nodes {
		sum = c.add(sum, c.count(n))
	}
	return sum
}

// add sums two counts, stopping just past MaxValues so that a count
// never overflows; the first time a sum passes it, the alias counted
// last is where.
func (c *aliasCounter) add(a, b int64) int64 {
	if a+b > MaxValues && c.at == nil {
		c.at = c.last
	}
	return min(a+b, MaxValues+1)
}
