package calltypes

import (
	"embed"
	"encoding/json"
)

// examples are realistic inputs of the built-ins: a shop's search page.
//
//go:embed examples/*.json
var examples embed.FS

// ExampleInput returns the sample input of a built-in type, decoded, for
// trying a type (headroom call) and for measuring caps.
func ExampleInput(name string) (any, bool) {
	data, err := examples.ReadFile("examples/" + name + ".json")
	if err != nil {
		return nil, false
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil, false
	}
	return v, true
}
