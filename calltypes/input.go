package calltypes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// InputError is a call's input that does not fit its type: it is refused
// before anything is reserved or sent.
type InputError struct {
	Type  string // the call type, when known
	Field string // the field at fault; "" for the input as a whole
	// Problem says what is wrong, e.g. "is missing" or "is not a field of
	// the input".
	Problem string
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString("calltypes: ")
	if e.Type != "" {
		b.WriteString("the " + e.Type + " input")
	} else {
		b.WriteString("the input")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "'s field %q", e.Field)
	}
	b.WriteString(" " + e.Problem)
	return b.String()
}

// JSONInput is an input check (Type.Input) for inputs of type T: the input
// must be one JSON object whose fields are all T's (decoded strictly, no
// unknown field), and each of required must be present and not empty
// (not null, "", [] or {}).
func JSONInput[T any](required ...string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return &InputError{Problem: "is not a JSON object: give an object with the type's fields"}
		}
		for _, name := range required {
			v, ok := fields[name]
			if !ok {
				return &InputError{Field: name, Problem: "is missing"}
			}
			switch string(bytes.TrimSpace(v)) {
			case "null", `""`, "[]", "{}":
				return &InputError{Field: name, Problem: "is empty"}
			}
		}
		if err := decodeStrictly[T](raw); err != nil {
			return inputDecodeError(err, fieldAtFault[T](fields))
		}
		return nil
	}
}

func decodeStrictly[T any](raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var v T
	return dec.Decode(&v)
}

// fieldAtFault is the first field that does not decode on its own into
// a T, for an error that names none (a page that does not read).
func fieldAtFault[T any](fields map[string]json.RawMessage) string {
	for _, name := range sortedKeys(fields) {
		one, _ := json.Marshal(map[string]json.RawMessage{name: fields[name]})
		if decodeStrictly[T](one) != nil {
			return name
		}
	}
	return ""
}

// inputDecodeError names the field a strict decode failed on; at is the
// field found at fault when the error names none.
func inputDecodeError(err error, at string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &InputError{Field: te.Field, Problem: fmt.Sprintf("is a JSON %s, not the %s it should be", te.Value, jsonKind(te.Type.Kind().String()))}
	}
	// encoding/json says `json: unknown field "x"`, with no typed error.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &InputError{Field: strings.Trim(f, `"`), Problem: "is not a field of the input"}
	}
	var pe *PageError
	if errors.As(err, &pe) {
		return &InputError{Field: at, Problem: fmt.Sprintf("does not read as a page (line %d: %s): write it as headroom observe prints one", pe.Line, pe.Problem)}
	}
	return &InputError{Field: at, Problem: fmt.Sprintf("does not decode: %v", err)}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	}
	return "number"
}

// CheckInput runs t's input check, when it has one, on in (JSON). Its
// error is an *InputError naming t.
func (t Type) CheckInput(in json.RawMessage) error {
	if t.Input == nil {
		return nil
	}
	err := t.Input(in)
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		named := *ie
		named.Type = t.Name
		return &named
	}
	return &InputError{Type: t.Name, Problem: err.Error()}
}
