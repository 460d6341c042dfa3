package calltypes

import (
	"reflect"
	"strings"
	"testing"
)

func mend(t *testing.T, name, text string) (any, []string, error) {
	t.Helper()
	ty, ok := Default().Lookup(name)
	if !ok || ty.Mend == nil {
		t.Fatalf("no type %s that mends", name)
	}
	return ty.Mend(text)
}

// Each slip a mend fixes: Parse refuses the answer, Mend reads it as the
// model can only have meant it, and says what it changed.
func TestMendFixesSlips(t *testing.T) {
	cases := []struct {
		text  string
		want  Action
		mends []string
	}{
		{`{"action":"click","index":0,"text":"","submit":true,"reason":"the first result matches"}`,
			Action{Kind: ActClick, Index: 0, Reason: "the first result matches"}, []string{"submit dropped from click"}},
		{`{"action":"select","index":4,"text":"Blue","submit":true,"reason":""}`,
			Action{Kind: ActSelect, Index: 4, Text: "Blue"}, []string{"submit dropped from select"}},
		{`{"action":"scroll","index":-1,"text":"down","submit":true,"reason":""}`,
			Action{Kind: ActScroll, Index: -1, Text: "down"}, []string{"submit dropped from scroll"}},
		{`{"action":"click","index":"3","text":"","submit":false,"reason":""}`,
			Action{Kind: ActClick, Index: 3}, []string{`index "3" read as 3`}},
		{`{"action":"type","index":" 3 ","text":"desk","submit":true,"reason":""}`,
			Action{Kind: ActType, Index: 3, Text: "desk", Submit: true}, []string{`index " 3 " read as 3`}},
		{`{"action":"scroll","index":"-1","text":"up","submit":false,"reason":""}`,
			Action{Kind: ActScroll, Index: -1, Text: "up"}, []string{`index "-1" read as -1`}},
		{`{"action":"done","index":0,"text":"","submit":false,"reason":"the order is placed"}`,
			Action{Kind: ActDone, Index: -1, Reason: "the order is placed"}, []string{"index 0 dropped from done"}},
		{`{"action":"navigate","index":12,"text":"https://shop.example/cart","submit":false,"reason":""}`,
			Action{Kind: ActNavigate, Index: -1, Text: "https://shop.example/cart"}, []string{"index 12 dropped from navigate"}},
		{`{"action":"done","index":"2","text":"","submit":true,"reason":""}`,
			Action{Kind: ActDone, Index: -1}, []string{`index "2" read as 2`, "submit dropped from done", "index 2 dropped from done"}},
	}
	for _, c := range cases {
		if _, err := parse(t, ClickPick, c.text); err == nil {
			t.Errorf("%s: Parse takes it, so there is nothing to mend", c.text)
		}
		got, mends, err := mend(t, ClickPick, c.text)
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(mends, c.mends) {
			t.Errorf("%s:\n got  %#v %q\n want %#v %q", c.text, got, mends, c.want, c.mends)
		}
	}
}

// An answer Parse takes, Mend takes the same, with nothing to say.
func TestMendTakesGoodAnswersAsTheyAre(t *testing.T) {
	for _, text := range []string{
		`{"action":"click","index":37,"text":"","submit":false,"reason":"the Search button"}`,
		`{"action":"type","index":4,"text":"kettle","submit":true,"reason":""}`,
		`{"action":"done","index":-1,"text":"","submit":false,"reason":"the order is placed"}`,
	} {
		want, err := parse(t, ClickPick, text)
		if err != nil {
			t.Fatal(err)
		}
		got, mends, err := mend(t, ClickPick, text)
		if err != nil || len(mends) != 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v %q %v, want %#v and no mends", text, got, mends, err, want)
		}
	}
}

// What a mend would have to guess stays refused, in the words Parse uses.
func TestMendRefusesWhatItCannotFix(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"action":"click","index":-1,"text":"","submit":true,"reason":""}`, "click needs the index of an element"},
		{`{"action":"click","text":"","submit":true,"reason":""}`, "field index is missing"},
		{`{"action":"click","index":null,"text":"","submit":false,"reason":""}`, "field index is null"},
		{`{"action":"fly","index":3,"text":"","submit":true,"reason":""}`, `action "fly" is not one of`},
		{`{"action":"click","index":"three","text":"","submit":false,"reason":""}`, "field index is a string; it must be a whole number"},
		{`{"action":"click","index":"3.5","text":"","submit":false,"reason":""}`, "field index is a string; it must be a whole number"},
		{`{"action":"click","index":"1e2","text":"","submit":false,"reason":""}`, "field index is a string"},
		{`{"action":"click","index":"","text":"","submit":false,"reason":""}`, "field index is a string"},
		{`{"action":"click","index":"99999999999999999999","text":"","submit":false,"reason":""}`, "field index is a string"},
		{`{"action":"click","index":3.5,"text":"","submit":false,"reason":""}`, "field index is 3.5; it must be a whole number"},
		{`{"action":"done","index":-7,"text":"","submit":false,"reason":""}`, "index -7 is not an element"},
		{`{"action":"navigate","index":3,"text":"","submit":false,"reason":""}`, "navigate needs text: the URL to open"},
		{`{"action":"scroll","index":-1,"text":"","submit":true,"reason":""}`, `scroll needs text "up" or "down"`},
		{`{"action":"type","index":4,"text":"","submit":true,"reason":""}`, "type needs text"},
		{`{"action":"click","index":3,"text":"","submit":"true","reason":""}`, "field submit is a string; it must be true or false"},
		{`{"action":"click","index":3,"text":"","submit":true,"reason":"","confidence":"1"}`, `field "confidence" the schema does not have`},
		{`{"action":"click","index":3,"text":"","submit":true,"reason":"` + strings.Repeat("a", maxPickReason+1) + `"}`, "reason has 201 characters"},
		{`{"action":"click","index":"3","text":"","submit":false,"reason":""} and more`, "goes on after its JSON value"},
		{`{"action":"click","index":"3"`, "it was cut off"},
		{``, "the answer is empty"},
	}
	for _, c := range cases {
		v, mends, err := mend(t, ClickPick, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || v != nil || mends != nil {
			t.Errorf("%.80s:\n got  %#v %q %v\n want the error %q", c.text, v, mends, err, c.want)
		}
	}
}

// JSONMender reads a number written as a string wherever the answer has
// an integer, at any depth, in range, and nowhere else.
func TestJSONMenderReadsIntegersWrittenAsStrings(t *testing.T) {
	type row struct {
		N     uint8  `json:"n"`
		Label string `json:"label"`
	}
	type answer struct {
		Rows  []row          `json:"rows"`
		Count *int32         `json:"count"`
		By    map[string]int `json:"by"`
	}
	m := JSONMender[answer](nil, nil)
	v, mends, err := m(`{"rows":[{"n":"7","label":"12"},{"n":8,"label":"x"}],"count":"+40","by":{"b":"2","a":1}}`)
	forty := int32(40)
	want := answer{Rows: []row{{7, "12"}, {8, "x"}}, Count: &forty, By: map[string]int{"a": 1, "b": 2}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v, %v; want %#v", v, err, want)
	}
	if w := []string{`by.b "2" read as 2`, `count "+40" read as 40`, `rows[0].n "7" read as 7`}; !reflect.DeepEqual(mends, w) {
		t.Errorf("mends %q, want %q", mends, w)
	}
	for text, want := range map[string]string{
		`{"rows":[{"n":"256","label":""}],"count":null,"by":{}}`: "field rows[0].n is a string; it must be a whole number",
		`{"rows":[],"count":"-1.0","by":{}}`:                     "field count is a string",
		`{"rows":[],"count":null,"by":{"a":"one"}}`:              "field by.a is a string",
	} {
		if _, _, err := m(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
	// The strict parser of the same type still refuses the string.
	if _, err := JSONParser[answer](nil)(`{"rows":[],"count":"4","by":{}}`); err == nil || !strings.Contains(err.Error(), "field count is a string") {
		t.Errorf("JSONParser: %v", err)
	}
}
