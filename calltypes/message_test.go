package calltypes

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A pick's input is written as sections a person reads top to bottom, the
// page last and verbatim, and reads back into the same input.
func TestMessageWritesSections(t *testing.T) {
	in := PickInput{
		Goal: "Add the first walnut piece to the cart", Plan: []string{"Filter by walnut", "Add it"}, Step: 1,
		History: []Taken{{Action: Action{Kind: ActClick, Index: 2}, Element: `checkbox "Walnut"`, Outcome: "changed"}},
		Page:    MustParsePage("url: https://shop.example/\ntitle: Shop\n[2] checkbox \"Walnut\" checked\n(301) 330 EUR"),
	}
	raw, _ := json.Marshal(in)
	msg := Message(raw)
	want := `goal: Add the first walnut piece to the cart
plan:
- Filter by walnut
- Add it
step: 1
history:
- click [2] on checkbox "Walnut" → changed
page:
url: https://shop.example/
title: Shop
[2] checkbox "Walnut" checked
(301) 330 EUR`
	if msg != want {
		t.Fatalf("got\n%s\nwant\n%s", msg, want)
	}
	back, err := ReadMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	var got PickInput
	if err := json.Unmarshal(back, &got); err != nil || got.Page.Render() != in.Page.Render() || got.Step != 1 || got.History[0] != in.History[0] || got.Plan[1] != "Add it" {
		t.Fatalf("read back %+v (%v)", got, err)
	}
	if !strings.Contains(string(raw), `"page"`) || len(msg) >= len(raw) {
		t.Errorf("the message (%d bytes) is no shorter than the JSON (%d)", len(msg), len(raw))
	}
}

// A value that would read as something else is written as JSON: the
// message reads back into exactly the input. A page is written on lines
// of its own, its words escaped as Render escapes them.
func TestMessageQuotesWhatWouldReadOtherwise(t *testing.T) {
	raw := json.RawMessage(`{"goal":"12","question":"","plain":"a & b","padded":" x ","lines":"a\nb","list":["true","- x","ok"],"n":3,"flag":false,"nested":{"a":[1,2]},"none":null,"empty":[],"page":"url: u\ntitle: t\n\\- not a list"}`)
	msg := Message(raw)
	for _, want := range []string{`goal: "12"`, `question: ""`, "plain: a & b", `padded: " x "`, `lines: "a\nb"`, `- "true"`, "- - x", "n: 3", "flag: false", `nested: {"a":[1,2]}`, "none: null", "empty: []", "page:\nurl: u\ntitle: t\n\\- not a list"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	back, err := ReadMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, raw, back) {
		t.Errorf("read back\n%s\nnot\n%s", back, raw)
	}
}

func TestMessageLeavesJSONThatIsNotAnObjectOfSections(t *testing.T) {
	for _, raw := range []string{`[1,2]`, `{"Goal":"x"}`, `"s"`, `{}`} {
		if got := Message(json.RawMessage(raw)); got != raw {
			t.Errorf("%s written as %q", raw, got)
		}
	}
	if back, err := ReadMessage(`{"Goal":"x"}`); err != nil || string(back) != `{"Goal":"x"}` {
		t.Errorf("JSON read back as %s, %v", back, err)
	}
	for _, bad := range []string{"", "not a section", "goal:", "goal:x", "goal: \"unclosed", "list:\n- a\n- 1"} {
		if _, err := ReadMessage(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// Whatever object is written, it reads back the same.
func FuzzMessage(f *testing.F) {
	f.Add(`{"goal":"g","page":"url: a\ntitle: b"}`)
	f.Add(`{"a":"12","b":["x","- y"],"c":{"d":null}}`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		msg := Message(json.RawMessage(s))
		back, err := ReadMessage(msg)
		if err != nil {
			t.Fatalf("%s wrote\n%s\nwhich does not read: %v", s, msg, err)
		}
		if !sameJSON(t, []byte(s), back) {
			t.Fatalf("%s wrote\n%s\nread back as %s", s, msg, back)
		}
	})
}
