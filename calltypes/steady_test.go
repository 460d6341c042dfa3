package calltypes

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStablePrefixLeadsTheMessage: each built-in's stable prefix is the
// start of the message its example input writes, holds its steady
// sections and none of the rest.
func TestStablePrefixLeadsTheMessage(t *testing.T) {
	for _, typ := range Default().Types() {
		ex, ok := ExampleInput(typ.Name)
		if !ok {
			continue
		}
		in, _ := json.Marshal(ex)
		system, user := typ.StablePrefix(in)
		if system != typ.System {
			t.Errorf("%s: the stable prefix does not begin with the system prompt", typ.Name)
		}
		msg := typ.Message(in)
		if user == "" || !strings.HasPrefix(msg, user) || user == msg {
			t.Errorf("%s: stable part %q is not a proper start of the message %.200q", typ.Name, user, msg)
		}
		if !strings.HasPrefix(user, "goal:") && !strings.HasPrefix(user, "question:") {
			t.Errorf("%s: stable part %q", typ.Name, user)
		}
		if strings.Contains(user, "page:") || strings.Contains(user, "step:") {
			t.Errorf("%s: the stable part holds what changes each step: %q", typ.Name, user)
		}
	}
}
