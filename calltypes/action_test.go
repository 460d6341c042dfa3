package calltypes

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestActionStringRoundTrips(t *testing.T) {
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Kind: ActClick, Index: 3}, `click [3]`},
		{Action{Kind: ActType, Index: 2, Text: "walnut desk", Submit: true}, `type [2] "walnut desk" and submit`},
		{Action{Kind: ActType, Index: 2, Text: `say "hi" → there`}, `type [2] "say \"hi\" → there"`},
		{Action{Kind: ActSelect, Index: 4, Text: "Price: low to high"}, `select [4] "Price: low to high"`},
		{Action{Kind: ActScroll, Index: -1, Text: "down"}, `scroll down`},
		{Action{Kind: ActScroll, Index: 7}, `scroll to [7]`},
		{Action{Kind: ActNavigate, Index: -1, Text: "https://shop.example/cart"}, `navigate "https://shop.example/cart"`},
		{Action{Kind: ActPress, Index: -1, Text: "Ctrl+A"}, `press "Ctrl+A"`},
		{Action{Kind: ActHover, Index: 5}, `hover [5]`},
		{Action{Kind: ActBack, Index: -1}, `back`},
		{Action{Kind: ActWait, Index: -1}, `wait`},
		{Action{Kind: ActUpload, Index: 4, Text: "<file:resume>"}, `upload [4] <file:resume>`},
		{Action{Kind: ActDone, Index: -1}, `done`},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%+v.String() = %s, want %s", c.a, got, c.want)
		}
		back, err := ParseAction(c.want)
		if err != nil || back != c.a {
			t.Errorf("ParseAction(%s) = %+v, %v; want %+v", c.want, back, err, c.a)
		}
	}
}

func TestParseActionRefuses(t *testing.T) {
	for _, s := range []string{"", "fly [3]", "hover", "press Escape", "upload [2] resume", "back [2]", "click 3", "click [x]", "click [-2]", `type [2] walnut`, "scroll sideways", `navigate "open`, "click [3] extra"} {
		if a, err := ParseAction(s); err == nil {
			t.Errorf("ParseAction(%q) = %+v, want an error", s, a)
		}
	}
}

func TestTakenIsOneLineInJSON(t *testing.T) {
	in := PickInput{Goal: "g", History: []Taken{
		{Action: Action{Kind: ActType, Index: 2, Text: "desk", Submit: true}, Element: `searchbox "Search → go"`, Outcome: "navigated to /search?q=desk"},
		{Action: Action{Kind: ActClick, Index: 5}, Outcome: "nothing"},
		{Action: Action{Kind: ActDone, Index: -1}},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"goal":"g","step":0,"history":["type [2] \"desk\" and submit on searchbox \"Search → go\" → navigated to /search?q=desk","click [5] → nothing","done"],"page":""}`
	if string(b) != want {
		t.Fatalf("marshal:\n got %s\nwant %s", b, want)
	}
	var back PickInput
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i := range in.History {
		if back.History[i] != in.History[i] {
			t.Errorf("history[%d] = %+v, want %+v", i, back.History[i], in.History[i])
		}
	}
	if err := json.Unmarshal([]byte(`{"history":["click [1] sideways"]}`), &back); err == nil {
		t.Error("a malformed step decoded")
	}
}

func FuzzParseTaken(f *testing.F) {
	f.Add(`type [2] "desk" and submit on searchbox "Search" → navigated`)
	f.Add(`scroll to [4] → changed`)
	f.Fuzz(func(t *testing.T, s string) {
		tk, err := ParseTaken(s)
		if err != nil {
			return
		}
		// What parses writes back to something that parses the same.
		again, err := ParseTaken(tk.String())
		if err != nil {
			t.Fatalf("%q parsed as %+v, whose String %q does not parse: %v", s, tk, tk.String(), err)
		}
		if again.Action != tk.Action {
			t.Fatalf("%q: action %+v, after a round trip %+v", s, tk.Action, again.Action)
		}
	})
}

func TestExamplesDecodeIntoTheirInputs(t *testing.T) {
	check := func(name string, v any) {
		data, err := examples.ReadFile("examples/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("examples/%s.json: %v", name, err)
		}
	}
	check(Planning, new(PlanInput))
	check(ClickPick, new(PickInput))
	check(YesNo, new(CheckInput))
	check(Summarize, new(SummaryInput))
}

func TestRegisterActionRefuses(t *testing.T) {
	for _, s := range []ActionSpec{
		{Name: "Click2", Describe: "x"},
		{Name: "click", Describe: "twice"},
		{Name: "stamp", Describe: ""},
		{Name: "stamp", Describe: "one; two"},
		{Name: "stamp", Describe: "a text", Text: Required},
		{Name: "stamp", Describe: "x", Write: writeType},
	} {
		if err := RegisterAction(s); err == nil {
			t.Errorf("RegisterAction(%+v) took it", s)
		}
	}
	if _, ok := LookupAction("stamp"); ok {
		t.Error("a refused action is registered")
	}
}

// An action with no written form of its own is its name, [index] and
// quoted text, each when it takes one.
func TestDefaultWrittenForm(t *testing.T) {
	spec := ActionSpec{Name: "stamp", Describe: "an element with a text", Element: Required, Text: Optional, TextIs: "the stamp"}
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Kind: "stamp", Index: 3}, `stamp [3]`},
		{Action{Kind: "stamp", Index: 3, Text: "paid"}, `stamp [3] "paid"`},
	} {
		if got := writeDefault(spec, c.a); got != c.want {
			t.Errorf("writeDefault(%+v) = %s, want %s", c.a, got, c.want)
		}
		a, rest, err := scanDefault(spec, strings.TrimPrefix(c.want, "stamp "))
		if err != nil || rest != "" || a != c.a {
			t.Errorf("scanDefault(%s) = %+v, %q, %v", c.want, a, rest, err)
		}
	}
	for _, bad := range []string{``, `"paid"`, `[3]x`} {
		if a, _, err := scanDefault(spec, bad); err == nil {
			t.Errorf("scanDefault(%q) = %+v, want an error", bad, a)
		}
	}
	if err := spec.validate(Action{Kind: "stamp", Index: -1}); err == nil || !strings.Contains(err.Error(), "needs the index") {
		t.Errorf("validate without an element: %v", err)
	}
}

// A file given bare is named as its placeholder, with no repair asked.
func TestUploadMendsABareFileName(t *testing.T) {
	a := Action{Kind: ActUpload, Index: 4, Text: "resume"}
	if m := mendAction(&a); len(m) != 1 || a.Text != "<file:resume>" || validateAction(a) != nil {
		t.Errorf("mended %v to %+v", m, a)
	}
	if err := validateAction(Action{Kind: ActUpload, Index: 4, Text: "/etc/passwd"}); err == nil {
		t.Error("an upload of a path passed")
	}
}
