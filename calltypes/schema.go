package calltypes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaParser is the parser of a call type known only by its JSON
// schema (one a config defines): the answer must be one JSON value that
// the schema validates, and it is returned as decoded JSON (objects as
// map[string]any). The schema is compiled once, here; it may not refer
// to anything outside itself.
func SchemaParser(schema map[string]any) (func(string) (any, error), error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "headroom:schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	return func(text string) (any, error) {
		if strings.Trim(text, jsonSpace) == "" {
			return nil, errors.New("the answer is empty: reply with one JSON object that matches the schema")
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("the answer is not one JSON value: %v", err)
		}
		if err := sch.Validate(inst); err != nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				return nil, fmt.Errorf("the answer does not match the schema: %s", schemaCauses(ve))
			}
			return nil, err
		}
		var out any
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			return nil, err
		}
		return out, nil
	}, nil
}

// schemaCauses is a validation error's causes on one line, for a repair
// request.
func schemaCauses(ve *jsonschema.ValidationError) string {
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, at+": "+e.ErrorKind.LocalizedString(enPrinter))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return strings.Join(parts, "; ")
}

var enPrinter = message.NewPrinter(language.English)

// noLoader refuses every $ref outside the schema: a call type's schema
// is sent to the model whole, so it must be whole.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s: a call type's schema must hold all it refers to ($defs)", url)
}
