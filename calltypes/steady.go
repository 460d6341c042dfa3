package calltypes

import (
	"encoding/json"
	"slices"
	"strings"
)

// StablePrefix is the part of a call's prompt that stays the same from
// one call of a task to the next: the system prompt, then the leading
// sections of its message whose fields are the type's Steady ones. Azure
// caches a prompt's prefix per deployment from 1,024 tokens on, so this
// is what a cache can hold of the type's calls; a type whose stable
// prefix is shorter is never served from a cache.
func (t Type) StablePrefix(in json.RawMessage) (system, user string) {
	fields, ok := objectFields(in)
	if !ok || t.Message == nil {
		return t.System, ""
	}
	var lead []field
	for _, f := range fields {
		if !slices.Contains(t.Steady, f.key) {
			break
		}
		lead = append(lead, f)
	}
	if len(lead) == 0 {
		return t.System, ""
	}
	msg := t.Message(asObject(lead))
	if len(lead) < len(fields) {
		msg += "\n" // the next section begins on a line of its own
	}
	return t.System, msg
}

// asObject is fields as a JSON object, in their order.
func asObject(fields []field) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}
