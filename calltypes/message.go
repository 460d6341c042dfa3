package calltypes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The user message of the built-in types is their input written as
// sections a person (and a model) reads top to bottom, not as JSON:
//
//	goal: Add the first walnut piece to the cart.
//	plan:
//	- Show only walnut furniture
//	- Add the first piece to the cart
//	step: 1
//	page:
//	url: https://shop.example/
//	…
//
// One section a field, in the input's order, named by its JSON key. A
// string stands after its key as it is; one that would read as something
// else (empty, padded, holding a line break, or itself valid JSON such as
// "12") is written as a JSON string. A list of strings is one "- " line an
// item. Numbers, booleans and anything nested are written as compact
// JSON. The last field, when it is a string of several lines (a page),
// follows its key on lines of its own, verbatim, to the end. JSON's
// quotes, escapes and keys are what a page of a hundred quoted names
// would otherwise pay for on every line. ReadMessage reads a message back
// into the same JSON.

// sectionKey is a key a section can be named by; an input with another
// key is sent as JSON.
var sectionKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// field is one of an object's fields, its value as written.
type field struct {
	key string
	raw json.RawMessage
}

// Message writes in, a JSON object, as sections. Anything else (an array,
// an object with a key no section can be named by) is returned as it is:
// ReadMessage reads JSON as JSON.
func Message(in json.RawMessage) string {
	fields, ok := objectFields(in)
	if !ok {
		return string(in)
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.key + ":")
		s, isString := stringOf(f.raw)
		list, isList := stringsOf(f.raw)
		switch {
		case isString && i == len(fields)-1 && isBlock(s):
			b.WriteString("\n" + s)
		case isString:
			b.WriteString(" " + scalar(s))
		case isList && len(list) > 0:
			for _, item := range list {
				b.WriteString("\n- " + scalar(item))
			}
		default:
			b.WriteString(" " + compactJSON(f.raw))
		}
	}
	return b.String()
}

// stringOf decodes a JSON string (and nothing else: null is not "").
func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// stringsOf decodes a JSON array of strings, and nothing else.
func stringsOf(raw json.RawMessage) ([]string, bool) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, false
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := stringOf(it)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// objectFields reads a JSON object's fields in order; ok is false when in
// is not an object whose keys can all name sections.
func objectFields(in json.RawMessage) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(in))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var fields []field
	for dec.More() {
		t, err := dec.Token()
		key, _ := t.(string)
		if err != nil || !sectionKey.MatchString(key) {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		fields = append(fields, field{key, raw})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // something after the object
	}
	return fields, len(fields) > 0
}

// isBlock reports whether s can be written on lines of its own: several
// lines, none of which could be taken for the list's or JSON's, nor read
// as the message's own (a section, a list item, a line of a page the
// product wrote). A page qualifies as Render writes it: its words never
// read as anything else, and its url and title are its own.
func isBlock(s string) bool {
	first, _, multi := strings.Cut(s, "\n")
	if !multi || first == "" || strings.HasPrefix(first, "- ") || strings.ContainsRune(s, '\r') {
		return false
	}
	if _, err := ParsePage(s); err == nil {
		return true
	}
	for l := range strings.SplitSeq(s, "\n") {
		if readsAsMarkup(l) || shown(l) != l {
			return false
		}
	}
	return true
}

// scalar writes s as it is when it reads back as itself, else as JSON.
func scalar(s string) string {
	if plain(s) {
		return s
	}
	b, _ := marshalNoEscape(s)
	return string(b)
}

// plain reports whether s, written bare, reads back as the string s.
func plain(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.HasPrefix(s, `"`) || json.Valid([]byte(s)) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// marshalNoEscape is json.Marshal without HTML escaping: a prompt has no
// reason to write "&" as \u0026.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ReadMessage reads a message Message wrote back into its JSON object. A
// message that is JSON is returned as it is.
func ReadMessage(msg string) (json.RawMessage, error) {
	if t := strings.TrimSpace(msg); json.Valid([]byte(t)) {
		return json.RawMessage(t), nil // sections never are
	}
	lines := strings.Split(msg, "\n")
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(lines); i++ {
		key, value, ok := strings.Cut(lines[i], ":")
		if !ok || !sectionKey.MatchString(key) {
			return nil, fmt.Errorf("calltypes: message line %d: %q is not a section (want key: value)", i+1, clipRunes(lines[i], 40))
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		switch {
		case value != "":
			if !strings.HasPrefix(value, " ") {
				return nil, fmt.Errorf("calltypes: message line %d: want a space after %q", i+1, key+":")
			}
			v, err := readScalar(value[1:])
			if err != nil {
				return nil, fmt.Errorf("calltypes: message line %d: %s: %v", i+1, key, err)
			}
			b.Write(v)
		case i+1 < len(lines) && strings.HasPrefix(lines[i+1], "- "):
			var items [][]byte
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "- ") {
				i++
				v, err := readScalar(lines[i][2:])
				if err != nil {
					return nil, fmt.Errorf("calltypes: message line %d: %s: %v", i+1, key, err)
				}
				var s string
				if json.Unmarshal(v, &s) != nil {
					return nil, fmt.Errorf("calltypes: message line %d: %s: a list holds strings", i+1, key)
				}
				items = append(items, v)
			}
			b.WriteByte('[')
			b.Write(bytes.Join(items, []byte(",")))
			b.WriteByte(']')
		case i+1 < len(lines):
			v, _ := marshalNoEscape(strings.Join(lines[i+1:], "\n"))
			b.Write(v)
			i = len(lines)
		default:
			return nil, fmt.Errorf("calltypes: message line %d: %s has no value", i+1, key)
		}
	}
	b.WriteByte('}')
	if b.Len() == 2 {
		return nil, errors.New("calltypes: the message is empty")
	}
	return b.Bytes(), nil
}

// readScalar reads a value written after its key: JSON when it is JSON,
// else the string as it stands.
func readScalar(s string) (json.RawMessage, error) {
	if strings.HasPrefix(s, `"`) {
		var v string
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("%q is not a JSON string", clipRunes(s, 40))
		}
		return json.RawMessage(s), nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s), nil
	}
	return marshalNoEscape(s)
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
