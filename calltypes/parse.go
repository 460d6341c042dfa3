package calltypes

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONParser returns a Parse func for answers of type T. It is strict, so
// that what the agent acts on is exactly what the model wrote: the text
// must be one JSON value and nothing else; every field T declares (but
// those tagged omitempty or omitzero) must be present, spelled exactly, and
// not null, and of the right JSON kind and range; fields T does not declare
// are refused; a cut-off or invalid JSON is refused naming the byte offset. Then validate, if not nil, judges
// the value. The parsed value is a T.
//
// Every error is worded for the model, which gets it back once as a repair
// request. JSONMender is its lenient twin, a type's Mend.
func JSONParser[T any](validate func(T) error) func(string) (any, error) {
	return func(text string) (any, error) {
		v, err := readJSON(text, nil, validate, nil)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// JSONMender returns a Mend func for answers of type T, the lenient twin
// of JSONParser[T](validate): an integer written as a JSON string that
// holds one ("3", " 3 ") is read as that integer, wherever T has an
// integer; then mend, if not nil, clears what the value holds that
// cannot mean anything (a field its kind does not use) and says what it
// cleared; then validate judges the result. Each fix is one short phrase
// (`index "3" read as 3`). What is wrong in any other way is refused as
// JSONParser refuses it.
func JSONMender[T any](mend func(*T) []string, validate func(T) error) func(string) (any, []string, error) {
	return func(text string) (any, []string, error) {
		mends := []string{}
		v, err := readJSON(text, mend, validate, &mends)
		if err != nil {
			return nil, nil, err
		}
		return v, mends, nil
	}
}

// readJSON reads text as a T: strictly when mends is nil, else mending
// what can be mended and adding each fix to mends.
func readJSON[T any](text string, mend func(*T) []string, validate func(T) error, mends *[]string) (T, error) {
	var v T
	if err := decode(text, &v, mends); err != nil {
		return v, err
	}
	if mends != nil && mend != nil {
		*mends = append(*mends, mend(&v)...)
	}
	if validate != nil {
		if err := validate(v); err != nil {
			return v, err
		}
	}
	return v, nil
}

// decode decodes text into v, a pointer, strictly; with mends set, an
// integer written as a string is read first (intsFromStrings).
func decode(text string, v any, mends *[]string) error {
	if strings.Trim(text, jsonSpace) == "" {
		return errors.New("the answer is empty: reply with one JSON object that matches the schema")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("the answer stops after %d bytes, before its JSON is complete (%w): it was cut off; reply with the whole object and keep its strings short", len(text), err)
		case errors.As(err, &syn):
			return fmt.Errorf("the answer is not valid JSON: %w at byte %d, near %s: reply with only the JSON object the schema describes", err, syn.Offset, near(text, syn.Offset))
		}
		return fmt.Errorf("the answer is not valid JSON: %w: reply with only the JSON object the schema describes", err)
	}
	end := dec.InputOffset()
	rest := text[end:]
	if trimmed := strings.TrimLeft(rest, jsonSpace); trimmed != "" {
		off := end + int64(len(rest)-len(trimmed))
		return fmt.Errorf("the answer goes on after its JSON value ends at byte %d, near %s: reply with one JSON object and nothing before or after it", end, near(text, off))
	}
	t := reflect.TypeOf(v).Elem()
	if mends != nil {
		raw = intsFromStrings(raw, t, "", mends)
	}
	if err := checkShape(raw, t, ""); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			field := typ.Field
			if field == "" {
				field = "the answer"
			}
			return fmt.Errorf("%s is a JSON %s; it must be %s", field, typ.Value, describe(typ.Type))
		}
		return fmt.Errorf("the answer does not match the schema: %w", err)
	}
	return nil
}

// jsonSpace is the whitespace JSON allows between tokens.
const jsonSpace = " \t\r\n"

// near quotes a little of text around byte off, for an error to point at.
func near(text string, off int64) string {
	const span = 24
	lo := max(0, int(off)-span)
	hi := min(len(text), int(off)+span)
	lo = min(lo, hi)
	s := text[lo:hi]
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	return fmt.Sprintf("%q", s)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkShape refuses what encoding/json would let through quietly: a
// missing field (it would read as its zero value, and index 0 is a real
// element), a null (the same), and a field T does not declare or spells in
// another case. It also checks every value's kind, so that an error names
// the exact field (steps[3], not steps).
func checkShape(raw json.RawMessage, t reflect.Type, path string) error {
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Pointer:
		if isNull(raw) {
			return nil
		}
		return checkShape(raw, t.Elem(), path)
	}
	if isNull(raw) {
		return fmt.Errorf("%s is null; it must be %s", where(path), describe(t))
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil // the type reads its own shape
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkScalar(raw, t, path)
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return fmt.Errorf("%s must be a JSON object", where(path))
		}
		fields := jsonFields(t)
		for _, key := range sortedKeys(obj) {
			known := false
			for _, f := range fields {
				known = known || f.name == key
			}
			if !known {
				names := make([]string, len(fields))
				for i, f := range fields {
					names[i] = fmt.Sprintf("%q", f.name)
				}
				return fmt.Errorf("%s has a field %q the schema does not have: use only %s", where(path), key, strings.Join(names, ", "))
			}
		}
		for _, f := range fields {
			v, ok := obj[f.name]
			if !ok {
				if f.optional {
					continue
				}
				return fmt.Errorf("field %s is missing: include every field the schema lists", join(path, f.name))
			}
			if f.optional && isNull(v) {
				continue
			}
			if err := checkShape(v, f.typ, join(path, f.name)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // bytes are a base64 string
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return fmt.Errorf("%s must be a JSON array", where(path))
		}
		for i, item := range items {
			if err := checkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return fmt.Errorf("%s must be a JSON object", where(path))
		}
		for _, key := range sortedKeys(obj) {
			if err := checkShape(obj[key], t.Elem(), join(path, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkScalar refuses a JSON value of the wrong kind for t, or a number
// t cannot hold, naming the field.
func checkScalar(raw json.RawMessage, t reflect.Type, path string) error {
	v := string(bytes.Trim(raw, jsonSpace))
	var kind string
	switch v[0] {
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "true or false"
	case '{':
		kind = "an object"
	case '[':
		kind = "an array"
	default:
		kind = "a number"
	}
	if kind != describe(t) && !(kind == "a number" && describe(t) == "a whole number") {
		return fmt.Errorf("%s is %s; it must be %s", where(path), kind, describe(t))
	}
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(v, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(v, 10, t.Bits())
	}
	if err != nil {
		return fmt.Errorf("%s is %s; it must be a whole number (no fraction or exponent) from %s", where(path), v, rangeOf(t))
	}
	return nil
}

// intsFromStrings rewrites in raw each JSON string that holds a whole
// number where t has an integer, as that number, and adds the fix to
// mends: "3" can mean nothing but 3. A string that holds anything else
// ("three", "3.5", a number t cannot hold) is left for checkShape to
// refuse; so is everything that is not such a string.
func intsFromStrings(raw json.RawMessage, t reflect.Type, path string, mends *[]string) json.RawMessage {
	switch t.Kind() {
	case reflect.Interface:
		return raw
	case reflect.Pointer:
		return intsFromStrings(raw, t.Elem(), path, mends)
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return raw
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return raw
		}
		n, ok := wholeNumber(strings.TrimSpace(s), t)
		if !ok {
			return raw
		}
		at := path
		if at == "" {
			at = "the answer"
		}
		*mends = append(*mends, fmt.Sprintf("%s %q read as %s", at, s, n))
		return json.RawMessage(n)
	case reflect.Struct, reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return raw
		}
		fields := map[string]reflect.Type{}
		if t.Kind() == reflect.Struct {
			for _, f := range jsonFields(t) {
				fields[f.name] = f.typ
			}
		}
		changed := false
		for _, k := range sortedKeys(obj) {
			et, ok := fields[k]
			if t.Kind() == reflect.Map {
				et, ok = t.Elem(), true
			}
			if !ok {
				continue // checkShape refuses it
			}
			if v := intsFromStrings(obj[k], et, join(path, k), mends); !bytes.Equal(v, obj[k]) {
				obj[k], changed = v, true
			}
		}
		if changed {
			return remarshal(raw, obj)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return raw // bytes are a base64 string
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return raw
		}
		changed := false
		for i, item := range items {
			if v := intsFromStrings(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), mends); !bytes.Equal(v, item) {
				items[i], changed = v, true
			}
		}
		if changed {
			return remarshal(raw, items)
		}
	}
	return raw
}

// wholeNumber is s written as JSON writes a number of type t, if s is
// one in t's range.
func wholeNumber(s string, t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(s, 10, t.Bits())
		return strconv.FormatUint(u, 10), err == nil
	}
	i, err := strconv.ParseInt(s, 10, t.Bits())
	return strconv.FormatInt(i, 10), err == nil
}

// remarshal is v written as JSON, or raw when it cannot be.
func remarshal(raw json.RawMessage, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// rangeOf is the span of integers t holds, in words.
func rangeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("0 to %d", uint64(1)<<t.Bits()-1)
	}
	return fmt.Sprintf("%d to %d", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
}

type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool
}

// jsonFields lists the JSON fields of struct type t as encoding/json sees
// them, embedded structs flattened.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		opts = "," + opts + ","
		optional := strings.Contains(opts, ",omitempty,") || strings.Contains(opts, ",omitzero,")
		out = append(out, jsonField{name: name, typ: f.Type, optional: optional})
	}
	return out
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.Trim(raw, jsonSpace)) == "null"
}

func where(path string) string {
	if path == "" {
		return "the answer"
	}
	return "field " + path
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// describe names a Go type in JSON's words.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return describe(t.Elem()) + " or null"
	}
	return "a JSON value"
}
