package calltypes

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, name, text string) (any, error) {
	t.Helper()
	ty, ok := Default().Lookup(name)
	if !ok {
		t.Fatalf("no type %s", name)
	}
	return ty.Parse(text)
}

func TestParseGoodAnswers(t *testing.T) {
	cases := []struct {
		name, text string
		want       any
	}{
		{Planning, `{"steps":["Search for the kettle","Open the cheapest result","Read its price"]}`,
			Plan{Steps: []string{"Search for the kettle", "Open the cheapest result", "Read its price"}}},
		{ClickPick, `{"action":"click","index":37,"text":"","submit":false,"reason":"the Search button"}`,
			Action{Kind: ActClick, Index: 37, Reason: "the Search button"}},
		{ClickPick, " {\"action\": \"type\", \"index\": 4, \"text\": \"kettle\", \"submit\": false, \"reason\": \"\"}\n",
			Action{Kind: ActType, Index: 4, Text: "kettle"}},
		{ClickPick, `{"action":"scroll","index":-1,"text":"down","submit":false,"reason":"the list goes on"}`,
			Action{Kind: ActScroll, Index: -1, Text: "down", Reason: "the list goes on"}},
		{ClickPick, `{"action":"scroll","index":12,"text":"","submit":false,"reason":"bring the form into view"}`,
			Action{Kind: ActScroll, Index: 12, Reason: "bring the form into view"}},
		{ClickPick, `{"action":"navigate","index":-1,"text":"https://example.com/a?b=1&c=2","submit":false,"reason":""}`,
			Action{Kind: ActNavigate, Index: -1, Text: "https://example.com/a?b=1&c=2"}},
		{ClickPick, `{"action":"done","index":-1,"text":"","submit":false,"reason":"the order is placed"}`,
			Action{Kind: ActDone, Index: -1, Reason: "the order is placed"}},
		{YesNo, `{"answer":true,"reason":"the cart shows 1 item"}`, Verdict{Answer: true, Reason: "the cart shows 1 item"}},
		{Summarize, `{"answer":"£34.99"}`, Summary{Answer: "£34.99"}},
	}
	for _, c := range cases {
		got, err := parse(t, c.name, c.text)
		if err != nil {
			t.Errorf("%s %s: %v", c.name, c.text, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: got %#v, want %#v", c.name, c.text, got, c.want)
		}
	}
}

// Every refusal says what is wrong in words the model can act on.
func TestParseRefusals(t *testing.T) {
	cases := []struct {
		name, text string
		want       string
	}{
		{ClickPick, ``, "the answer is empty"},
		{ClickPick, "  \n", "the answer is empty"},
		{ClickPick, `{"action":"click","index":37,"text":"","rea`, "stops after 43 bytes, before its JSON is complete"},
		{ClickPick, `{"action":"click","index":37,"text":"","submit":false,"reason":"the Sea`, "it was cut off"},
		{ClickPick, "```json\n{\"action\":\"click\"}\n```", "not valid JSON: invalid character '`' looking for beginning of value at byte 1"},
		{ClickPick, `{"action":"click","index":37 "text":""}`, `after object key:value pair at byte 30, near "on\":\"click\",\"index\":37 \"text`},
		{ClickPick, `{"action":"click","index":37,"text":"","submit":false,"reason":""} {"action":"done"}`, "goes on after its JSON value ends at byte 66, near"},
		{ClickPick, `{"action":"click","index":37,"text":"","submit":false,"reason":""} I clicked it.`, "nothing before or after it"},
		{ClickPick, `{"action":"click","text":"","submit":false,"reason":""}`, "field index is missing"},
		{ClickPick, `{"action":"click","index":null,"text":"","submit":false,"reason":""}`, "field index is null; it must be a whole number"},
		{ClickPick, `{"action":"click","index":"37","text":"","submit":false,"reason":""}`, "field index is a string; it must be a whole number"},
		{ClickPick, `{"action":"click","index":3.5,"text":"","submit":false,"reason":""}`, "field index is 3.5; it must be a whole number (no fraction or exponent) from -9223372036854775808 to 9223372036854775807"},
		{ClickPick, `{"action":"click","index":37,"text":"","submit":false,"reason":"","confidence":0.9}`, `field "confidence" the schema does not have: use only "action", "index", "text", "submit", "reason"`},
		{ClickPick, `{"Action":"click","index":37,"text":"","reason":""}`, `field "Action" the schema does not have`},
		{ClickPick, `["click",37]`, "the answer must be a JSON object"},
		{ClickPick, `null`, "the answer is null"},
		{ClickPick, `{"action":"fly","index":3,"text":"","submit":false,"reason":""}`, `action "fly" is not one of click, type, select, scroll, navigate, press, hover, back, wait, upload, tab, close-tab, done`},
		{ClickPick, `{"action":"click","index":-1,"text":"","submit":false,"reason":""}`, "click needs the index of an element"},
		{ClickPick, `{"action":"select","index":-1,"text":"Blue","submit":false,"reason":""}`, "select needs the index"},
		{ClickPick, `{"action":"done","index":-7,"text":"","submit":false,"reason":""}`, "index -7 is not an element"},
		{ClickPick, `{"action":"done","index":0,"text":"","submit":false,"reason":""}`, "done acts on no element: set index -1"},
		{ClickPick, `{"action":"navigate","index":2,"text":"https://shop.example/","submit":false,"reason":""}`, "navigate acts on no element: set index -1"},
		{ClickPick, `{"action":"click","index":0,"text":"","submit":true,"reason":""}`, "submit belongs to type; set it false for click"},
		{ClickPick, `{"action":"type","index":4,"text":" ","submit":false,"reason":""}`, "type needs text: what to type"},
		{ClickPick, `{"action":"navigate","index":-1,"text":"","submit":false,"reason":""}`, "navigate needs text: the URL to open"},
		{ClickPick, `{"action":"scroll","index":-1,"text":"left","submit":false,"reason":""}`, `scroll needs text "up" or "down"`},
		{ClickPick, `{"action":"scroll","index":-1,"text":"","submit":false,"reason":""}`, `scroll needs text "up" or "down"`},
		{Planning, `{"steps":[]}`, "steps is empty: give 1 to 8 steps"},
		{Planning, `{"steps":null}`, "field steps is null; it must be an array"},
		{Planning, `{"steps":"Search, then buy"}`, "field steps must be a JSON array"},
		{Planning, `{"steps":["Search",null]}`, "field steps[1] is null"},
		{Planning, `{"steps":["Search",""]}`, "steps[1] is empty"},
		{Planning, `{"steps":["Search",7]}`, "field steps[1] is a number; it must be a string"},
		{Planning, `{"steps":["1","2","3","4","5","6","7","8","9"]}`, "steps has 9 steps: give at most 8"},
		{Planning, `{"steps":["` + strings.Repeat("é", 121) + `"]}`, "steps[0] has 121 characters: keep it to at most 120"},
		{YesNo, `{"answer":"yes","reason":""}`, "field answer is a string; it must be true or false"},
		{YesNo, `{"reason":"it worked"}`, "field answer is missing"},
		{YesNo, `{"answer":true,"reason":["a"]}`, "field reason is an array; it must be a string"},
		{ClickPick, `{"action":"click","index":1e2,"text":"","submit":false,"reason":""}`, "field index is 1e2; it must be a whole number"},
		{ClickPick, `{"action":{"name":"click"},"index":1,"text":"","submit":false,"reason":""}`, "field action is an object; it must be a string"},
		{Summarize, `{"answer":""}`, "answer is empty"},
		{Summarize, `{"answer":"` + strings.Repeat("a", 2001) + `"}`, "answer has 2001 characters: keep it to at most 2000"},
	}
	for _, c := range cases {
		_, err := parse(t, c.name, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q:\n err  %v\n want %q", c.name, c.text, err, c.want)
		}
	}
}

func TestParseErrorsWrapTheCause(t *testing.T) {
	_, err := parse(t, YesNo, `{"answer":tr`)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut-off answer: %v does not wrap io.ErrUnexpectedEOF", err)
	}
	_, err = parse(t, YesNo, `{"answer":yes}`)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) || syn.Offset != 11 {
		t.Errorf("invalid JSON: %v does not wrap a *json.SyntaxError at offset 11", err)
	}
}

func TestJSONParserOptionalFields(t *testing.T) {
	type answer struct {
		Name  string  `json:"name"`
		Note  string  `json:"note,omitempty"`
		Price *string `json:"price"`
		Skip  string  `json:"-"`
		//lint:ignore U1000 here to show an unexported field is not a JSON field
		inner string
	}
	parse := JSONParser[answer](nil)
	for _, text := range []string{`{"name":"a","price":null}`, `{"name":"a","note":"b","price":"1"}`, `{"name":"a","note":null,"price":null}`} {
		if _, err := parse(text); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
	for _, text := range []string{`{"name":"a"}`, `{"name":"a","price":null,"Skip":"x"}`, `{"name":"a","price":null,"inner":"x"}`} {
		if _, err := parse(text); err == nil {
			t.Errorf("%s: accepted", text)
		}
	}
}

func TestJSONParserNumberRanges(t *testing.T) {
	parse := JSONParser[struct {
		N uint8 `json:"n"`
	}](nil)
	if _, err := parse(`{"n":255}`); err != nil {
		t.Error(err)
	}
	for _, text := range []string{`{"n":256}`, `{"n":-1}`} {
		if _, err := parse(text); err == nil || !strings.Contains(err.Error(), "from 0 to 255") {
			t.Errorf("%s: err = %v", text, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{Planning, ClickPick, YesNo, Summarize} {
		f.Add(longestAnswer(name))
	}
	for _, s := range []string{
		`{"steps":["Search for the kettle","Open the cheapest result"]}`,
		`{"action":"click","index":37,"text":"","submit":false,"reason":"the Search button"}`,
		`{"action":"scroll","index":-1,"text":"up","submit":false,"reason":""}`,
		`{"answer":true,"reason":"yes"}`,
		`{"answer":"\u00e9\ud83d\ude00 \"quoted\" \\ <b>&amp;</b>"}`,
		`{"action":"click","index":37,"text":"","rea`,
		`{"action":"type","index":1,"text":"\xff\xfe","submit":false,"reason":"","action":"done"}`,
		`{"steps":["a"]} `,
		`null`,
		`{"action":"click","index":0,"text":"","submit":true,"reason":"the first result matches"}`,
		`{"action":"done","index":" 4","text":"","submit":true,"reason":""}`,
		`{"action":"navigate","index":"+2","text":"https://a.example/","submit":false,"reason":""}`,
	} {
		f.Add(s)
	}
	types := Default().Types()
	f.Fuzz(func(t *testing.T, text string) {
		for _, ty := range types {
			v, err := ty.Parse(text)
			if ty.Mend != nil {
				fuzzMend(t, ty, text, v, err)
			}
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("%s: an empty error for %q", ty.Name, text)
				}
				continue
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %#v parsed from %q does not marshal: %v", ty.Name, v, text, err)
			}
			v2, err := ty.Parse(string(again))
			if err != nil {
				t.Fatalf("%s: %q parsed, but its re-marshalled form %s does not: %v", ty.Name, text, again, err)
			}
			if !reflect.DeepEqual(v, v2) {
				t.Fatalf("%s: %q parsed to %#v, its re-marshalled form %s to %#v", ty.Name, text, v, again, v2)
			}
		}
	})
}

// fuzzMend checks Mend against what Parse made of text (v, err): an
// answer Parse takes, Mend takes the same with no fixes; one it mends
// comes with its fixes, and its value, written again, is one Parse takes
// as it is.
func fuzzMend(t *testing.T, ty Type, text string, v any, err error) {
	t.Helper()
	mv, mends, merr := ty.Mend(text)
	switch {
	case err == nil && (merr != nil || len(mends) != 0 || !reflect.DeepEqual(mv, v)):
		t.Fatalf("%s: Parse took %q as %#v, Mend gives %#v %q %v", ty.Name, text, v, mv, mends, merr)
	case merr != nil:
		if merr.Error() == "" {
			t.Fatalf("%s: Mend gives an empty error for %q", ty.Name, text)
		}
		return
	case err != nil && len(mends) == 0:
		t.Fatalf("%s: Mend took %q, which Parse refused (%v), and names no fix", ty.Name, text, err)
	}
	again, jerr := json.Marshal(mv)
	if jerr != nil {
		t.Fatalf("%s: %#v mended from %q does not marshal: %v", ty.Name, mv, text, jerr)
	}
	v2, perr := ty.Parse(string(again))
	if perr != nil || !reflect.DeepEqual(v2, mv) {
		t.Fatalf("%s: %q mended (%q) to %s, which Parse reads as %#v, %v", ty.Name, text, mends, again, v2, perr)
	}
}
