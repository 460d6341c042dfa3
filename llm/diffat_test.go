package llm

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

func TestFirstDiff(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, c := range []struct {
		name, a, b string
		n          int
		want       diffAt
	}{
		{"equal", "same", "same", 3, diffAt{Offset: -1}},
		{"both empty", "", "", 3, diffAt{Offset: -1}},
		{"at the start", "abcdef", "xbcdef", 3, diffAt{Offset: 0, A: "abc", B: "xbc", CutA: true, CutB: true}},
		{"in the middle", long + "in stock" + long, long + "sold out" + long, 4,
			diffAt{Offset: 100, Before: "xxxx", A: "in s", B: "sold", CutBefore: true, CutA: true, CutB: true}},
		{"a shared word before the difference", "the oak desk is in stock", "the oak desk is sold out", 10,
			diffAt{Offset: 16, Before: "k desk is ", A: "in stock", B: "sold out", CutBefore: true}},
		{"at the end", "abcdef", "abcdeg", 3, diffAt{Offset: 5, Before: "cde", A: "f", B: "g", CutBefore: true}},
		{"a prefix of b", "abc", "abcdef", 2, diffAt{Offset: 3, Before: "bc", A: "", B: "de", CutBefore: true, CutB: true}},
		{"b a prefix of a", "abcdef", "abc", 10, diffAt{Offset: 3, Before: "abc", A: "def", B: ""}},
		{"one empty", "", "abc", 2, diffAt{Offset: 0, A: "", B: "ab", CutB: true}},
		// é is c3 a9 and è c3 a8: the first differing byte is inside the
		// character; the difference starts at the character.
		{"inside a multibyte character", "café crème", "cafè crème", 2,
			diffAt{Offset: 3, Before: "af", A: "é ", B: "è ", CutBefore: true, CutA: true, CutB: true}},
		// Context is counted in characters, and never cut through one.
		{"multibyte context", "日本語のテキストA", "日本語のテキストB", 3,
			diffAt{Offset: len("日本語のテキスト"), Before: "キスト", A: "A", B: "B", CutBefore: true}},
		{"emoji at the difference", "ok 👍 done", "ok 👎 done", 1,
			diffAt{Offset: 3, Before: " ", A: "👍", B: "👎", CutBefore: true, CutA: true, CutB: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := firstDiff(c.a, c.b, c.n)
			if got != c.want {
				t.Errorf("firstDiff(%q, %q, %d) =\n %+v, want\n %+v", c.a, c.b, c.n, got, c.want)
			}
			if got.Offset < 0 {
				return
			}
			// Together the pieces are the texts' own bytes around Offset.
			if !strings.HasSuffix(c.a[:got.Offset], got.Before) || !strings.HasPrefix(c.a[got.Offset:], got.A) || !strings.HasPrefix(c.b[got.Offset:], got.B) {
				t.Errorf("pieces are not the texts': %+v", got)
			}
		})
	}
}

func TestDiffLinesPointAtTheDifference(t *testing.T) {
	d := firstDiff("page: \"the oak desk is in stock\"\nnext", "page: \"the oak desk is sold out\"\nnext", 12)
	got := d.lines(true, "  ", "recorded:", "now:")
	want := "" +
		`  recorded: …oak desk is in stock\"\nne…` + "\n" +
		`  now:      …oak desk is sold out\"\nne…` + "\n" +
		`                         ^`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A whole short string shows its quotes; a wide character counts two
	// columns for the caret.
	got = firstDiff("日本 a", "日本 b", 10).lines(true, "", "a:", "b:")
	want = "a: \"日本 a\"\nb: \"日本 b\"\n         ^"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A JSON value is shown as it is.
	got = firstDiff(`{"max":12}`, `null`, 10).lines(false, "", "recorded:", "now:")
	want = "recorded: {\"max\":12}\nnow:      null\n          ^"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A call a cassette did not record shows where it first differs from the
// closest recorded one, however deep in the prompt that is, and what
// surrounds it on each side.
func TestACassetteMissShowsTheTextAroundTheDifference(t *testing.T) {
	sc := newSimCaller(t, "heuristic", map[string]azuresim.Model{"heuristic": heuristic.Model{}})
	var rec bytes.Buffer
	sc.Cassette = NewCassette(&rec, sc.Dispatcher.Secrets()...)
	in := inputs["click-pick"].(calltypes.PickInput)
	filler := strings.Repeat("Solid oak, hand finished, made to order. ", 30) // past any fixed cut
	in.Page = withText(in.Page, filler+`Stock: "the oak desk is in stock" (checked today). `+filler)
	other := inputs["yes-no"].(calltypes.CheckInput)
	for _, call := range []struct {
		typ string
		in  any
	}{{"yes-no", other}, {"click-pick", inputs["click-pick"]}, {"click-pick", in}} {
		if _, _, err := sc.Call(context.Background(), call.typ, asJSON(call.in), CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cas, err := LoadCassette(bytes.NewReader(rec.Bytes()), "/some/dir/calls.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	changed := in
	changed.Page = editPage(in.Page, func(s string) string { return strings.Replace(s, "in stock", "sold out", 1) })
	_, _, err = replayer.Call(context.Background(), "click-pick", asJSON(changed), CallOptions{})
	if !errors.Is(err, ErrReplayMismatch) {
		t.Fatalf("a call the cassette did not record: %v", err)
	}
	msg := err.Error()
	t.Logf("the miss:\n%s", msg)
	off := strings.Index(in.Page.Render(), "in stock")
	for _, want := range []string{
		"the closest recorded click-pick request (calls.jsonl:3) differs at messages[1].content.page, from byte ",
		// 40 characters each side, quotes escaped as in the JSON.
		"\n    recorded: …" + ` made to order. Stock: \"the oak desk is in stock\" (checked today). Solid oak, ha…`,
		"\n    now:      …" + ` made to order. Stock: \"the oak desk is sold out\" (checked today). Solid oak, ha…`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the miss does not say %q", want)
		}
	}
	if !strings.Contains(msg, "from byte "+itoa(off)+":") {
		t.Errorf("the miss does not give the offset %d", off)
	}
	lines := strings.Split(msg, "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4", len(lines))
	}
	caret := lines[3]
	if i := strings.Index(lines[1], "in stock"); i < 0 || strings.TrimSpace(caret) != "^" || len(caret)-1 != runeCount(lines[1][:i]) {
		t.Errorf("the caret is not under the difference:\n%s\n%s", lines[1], caret)
	}
	// A type it never recorded names the cassette.
	if _, _, err := replayer.Call(context.Background(), "summarize", asJSON(inputs["summarize"]), CallOptions{}); !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "no summarize call was recorded in calls.jsonl") {
		t.Errorf("an unrecorded type: %v", err)
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

func runeCount(s string) int { return len([]rune(s)) }

// Where the recording has the marker and the replay knows no key, the
// live request's word there may be the secret: a miss around it shows
// the marker, not the word.
func TestACassetteMissShowsNoSecretTheReplayDoesNotKnow(t *testing.T) {
	rec, leaky := recordLeakyCall(t)
	cas, err := LoadCassette(bytes.NewReader(rec.Bytes()), "run.jsonl") // no key known
	if err != nil {
		t.Fatal(err)
	}
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	for _, edit := range []func(string) string{
		func(s string) string { return s + " And more text after it." },                  // differs after the secret
		func(s string) string { return strings.Replace(s, "Welcome", "Hello", 1) },       // before it
		func(s string) string { return strings.Replace(s, testKey+".", testKey+"!", 1) }, // at it
	} {
		changed := leaky
		changed.Page = editPage(leaky.Page, edit)
		_, _, err := replayer.Call(context.Background(), "yes-no", asJSON(changed), CallOptions{})
		if !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "messages[1].content.page, from byte ") {
			t.Errorf("mismatch: %v", err)
			continue
		}
		if strings.Contains(err.Error(), "0123456789") || strings.Contains(err.Error(), "secret") {
			t.Errorf("the miss shows the key:\n%v", err)
		}
	}
}

func TestHideNew(t *testing.T) {
	rec := "key=[redacted]. Welcome to the shop"
	for _, c := range []struct {
		s    string
		cut  bool
		want string
	}{
		{"sk-test-secret-0123456789. Welcome", false, "[redacted] Welcome"},
		{"short words stay", false, "short words stay"},
		{"Welcome to the shop", false, "Welcome to the shop"}, // the recording's own words
		{"then sk-te", true, "then [redacted]"},               // a word the cut falls in
		{"then shop", true, "then shop"},
		{"then sk-te ", true, "then sk-te "},
	} {
		if got := hideNew(c.s, rec, c.cut); got != c.want {
			t.Errorf("hideNew(%q, %v) = %q, want %q", c.s, c.cut, got, c.want)
		}
	}
}
