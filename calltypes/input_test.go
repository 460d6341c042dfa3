package calltypes

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

func TestBuiltinsCheckTheirInput(t *testing.T) {
	r := Default()
	for _, name := range []string{Planning, ClickPick, YesNo, Summarize} {
		typ, _ := r.Lookup(name)
		if typ.Input == nil {
			t.Errorf("%s has no input check", name)
			continue
		}
		// Its own example passes.
		raw, err := os.ReadFile("examples/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := typ.CheckInput(raw); err != nil {
			t.Errorf("%s refuses its example: %v", name, err)
		}
		q := ""
		if name == YesNo {
			q = `"question":"q",`
		}
		var ie *InputError
		if err := typ.CheckInput(json.RawMessage(`{"goal":"g",` + q + `"extra":1}`)); !errors.As(err, &ie) || ie.Field != "extra" || ie.Type != name {
			t.Errorf("%s with an unknown field: %v", name, err)
		}
		if err := typ.CheckInput(json.RawMessage(`{"question":"q"}`)); !errors.As(err, &ie) || ie.Field != "goal" {
			t.Errorf("%s without a goal: %v", name, err)
		}
	}
}

func TestCheckInputNamesTheType(t *testing.T) {
	typ := Type{Name: "t", Input: func(json.RawMessage) error { return errors.New("too long") }}
	var ie *InputError
	if err := typ.CheckInput(nil); !errors.As(err, &ie) || ie.Type != "t" || err.Error() != "calltypes: the t input too long" {
		t.Errorf("%v", err)
	}
	if err := (Type{Name: "free"}).CheckInput(json.RawMessage(`[]`)); err != nil {
		t.Errorf("a type with no check refused: %v", err)
	}
}
