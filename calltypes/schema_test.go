package calltypes

import (
	"strings"
	"testing"
)

func pricesSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"items"},
		"properties": map[string]any{"items": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []any{"name", "price"},
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "price": map[string]any{"type": "number"}},
			},
		}},
	}
}

func TestDefineValidatesAsRegisterAndParsesBySchema(t *testing.T) {
	r := NewRegistry()
	if err := r.Define("extract-prices", Override{MaxTokens: 300, System: "List the prices.", Schema: pricesSchema(), ReasoningEffort: "low"}); err != nil {
		t.Fatal(err)
	}
	typ, ok := r.Lookup("extract-prices")
	if !ok || typ.MaxTokens != 300 || typ.ReasoningEffort != "low" || typ.N != 1 || typ.Priority != Interactive {
		t.Fatalf("defined type %+v", typ)
	}
	v, err := typ.Parse(`{"items": [{"name": "Walnut desk", "price": 640}]}`)
	if err != nil {
		t.Fatal(err)
	}
	items := v.(map[string]any)["items"].([]any)
	if items[0].(map[string]any)["price"] != 640.0 {
		t.Errorf("parsed %v", v)
	}
	for text, want := range map[string]string{
		`{"items": [{"name": "x"}]}`:             "/items/0: missing property 'price'",
		`{"items": "none"}`:                      "/items: got string, want array",
		`{"items": [], "extra": 1}`:              "additional properties 'extra' not allowed",
		`not json`:                               "not one JSON value",
		``:                                       "the answer is empty",
		`{"items": [{"name": 1, "price": "2"}]}`: "/items/0/name: got number, want string",
	} {
		if _, err := typ.Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", text, err, want)
		}
	}
	if err := typ.Input([]byte(`[]`)); err == nil {
		t.Error("a defined type takes an array as its input")
	}
	for name, o := range map[string]Override{
		"no-system": {MaxTokens: 10, Schema: pricesSchema()},
		"no-schema": {MaxTokens: 10, System: "s"},
		"no-cap":    {System: "s", Schema: pricesSchema()},
		"loose":     {MaxTokens: 10, System: "s", Schema: map[string]any{"type": "object", "properties": map[string]any{}}},
		"effort":    {MaxTokens: 10, System: "s", Schema: pricesSchema(), ReasoningEffort: "extreme"},
		"planning":  {MaxTokens: 10, System: "s", Schema: pricesSchema()},
	} {
		reg := Default()
		if err := reg.Define(name, o); err == nil {
			t.Errorf("Define(%s) accepted %+v", name, o)
		}
	}
}

// FuzzSchemaParser: whatever a model writes, a defined type's parser
// returns a value the schema accepts or an error, never a panic.
func FuzzSchemaParser(f *testing.F) {
	for _, s := range []string{`{"items": []}`, `{"items": [{"name": "a", "price": 1}]}`, `[`, `{"items": [{"name": "a", "price": 1e999}]}`, `null`, "\x00", `{"items": [[[[[]]]]]}`} {
		f.Add(s)
	}
	parse, err := SchemaParser(pricesSchema())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := parse(text)
		if err == nil {
			if _, ok := v.(map[string]any)["items"].([]any); !ok {
				t.Errorf("accepted %q as %v", text, v)
			}
		}
	})
}
