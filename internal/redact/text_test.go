package redact

import (
	"encoding/json"
	"html/template"
	"net/url"
	"strings"
	"testing"
)

func TestURLRedactsAsTheHARDoes(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "",
		"https://shop.example/cart?item=3":      "https://shop.example/cart?item=3",
		"https://ann:pw@shop.example/":          "https://shop.example/",
		"https://x.example/cb?code=abc&state=1": "https://x.example/cb?code=%5Bredacted%5D&state=1",
		"/echo.html?session_id=S1&auth=A1&q=2":  "/echo.html?session_id=%5Bredacted%5D&auth=%5Bredacted%5D&q=2",
		"https://x.example/#access_token=T1&token_type=bearer": "https://x.example/#access_token=%5Bredacted%5D&token_type=bearer",
		"https://x.example/#section-2":                         "https://x.example/#section-2",
		"mailto:ann@example.com":                               "mailto:ann@example.com",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A value redacted by name is a secret from then on, wherever it is
// written without its name.
func TestURLLearnsWhatItRedacts(t *testing.T) {
	v := "LEARNED-4412-code"
	if got := Text("shown: " + v); !strings.Contains(got, v) {
		t.Fatalf("a value no name marked was scrubbed: %s", got)
	}
	URL("https://x.example/cb?code=" + v)
	if got := Text("the page says " + v + "."); got != "the page says [redacted]." {
		t.Errorf("Text after URL: %q", got)
	}
	LearnURL("https://x.example/api?session_id=LEARNED-9931-sess")
	if got := Text("id LEARNED-9931-sess"); got != "id [redacted]" {
		t.Errorf("Text after LearnURL: %q", got)
	}
	short := "https://x.example/?pin=1234"
	URL(short)
	if got := Text("1234 items"); got != "1234 items" {
		t.Errorf("a value shorter than MinEcho was learned: %q", got)
	}
}

func TestTextRedactsParametersWrittenInText(t *testing.T) {
	for in, want := range map[string]string{
		"no parameters here":                       "no parameters here",
		"went to /a?code=XYZ1&x=1 then":            "went to /a?code=%5Bredacted%5D&x=1 then",
		`{"url":"https://a/b?x=1\u0026auth=QQQ1"}`: `{"url":"https://a/b?x=1\u0026auth=%5Bredacted%5D"}`,
		`<a href="/b?x=1&amp;token=TTT1">`:         `<a href="/b?x=1&amp;token=%5Bredacted%5D">`,
		"exit_code=3 and code=4 stay":              "exit_code=3 and code=4 stay",
		"a?code=%5Bredacted%5D":                    "a?code=%5Bredacted%5D",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretValuesInEveryEncoding(t *testing.T) {
	v := `KEY<&>"9f2/a b`
	Secret(v)
	js, _ := json.Marshal("x " + v + " y")
	for _, s := range []string{
		"raw " + v,
		string(js),
		"q=" + url.QueryEscape(v),
		"/p/" + url.PathEscape(v),
		template.HTMLEscapeString("in html " + v),
	} {
		if got := Text(s); strings.Contains(got, "9f2") {
			t.Errorf("Text(%q) = %q: the value is still there", s, got)
		}
	}
	Secret("abc") // too short to scrub anywhere
	if got := Text("abcdef"); got != "abcdef" {
		t.Errorf("a 3-character value was scrubbed: %q", got)
	}
}

func TestCopyRedactsEveryString(t *testing.T) {
	Secret("COPY-SECRET-77")
	type inner struct {
		Note string
		Raw  json.RawMessage
	}
	type rec struct {
		Name  string
		List  []string
		Map   map[string]any
		Ptr   *inner
		Any   any
		Count int
		quiet string
	}
	in := rec{
		Name: "COPY-SECRET-77", List: []string{"a", "/x?token=T0K3N-1"}, Count: 3, quiet: "COPY-SECRET-77",
		Map: map[string]any{"k": []any{"COPY-SECRET-77", 1.5}},
		Ptr: &inner{Note: "n COPY-SECRET-77", Raw: json.RawMessage(`{"a":"COPY-SECRET-77"}`)},
		Any: map[string]any{"deep": map[string]any{"v": "COPY-SECRET-77"}},
	}
	out := Copy(in)
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "COPY-SECRET") || strings.Contains(string(b), "T0K3N") {
		t.Errorf("left in the copy: %s", b)
	}
	if out.Count != 3 || out.List[0] != "a" || out.quiet != "COPY-SECRET-77" {
		t.Errorf("the copy changed what it should keep: %+v", out)
	}
	if in.Name != "COPY-SECRET-77" || in.Ptr.Note != "n COPY-SECRET-77" || in.List[1] != "/x?token=T0K3N-1" {
		t.Errorf("the original changed: %+v", in)
	}
}

func TestValueFieldsAreSecretWhateverTheirName(t *testing.T) {
	var n Names
	n.AddValue("hunter22")
	if q, ok := n.Query("user=ann&pw1=hunter22"); !ok || q != "user=ann&pw1=%5Bredacted%5D" {
		t.Errorf("Query: %q %v", q, ok)
	}
	if j, ok := n.JSON([]byte(`{"user":"ann","pw1":"hunter22","n":["hunter22x"]}`)); !ok || string(j) != `{"user":"ann","pw1":"[redacted]","n":["hunter22x"]}` {
		t.Errorf("JSON: %s %v", j, ok)
	}
	if b := n.Scrub([]byte("user=ann;pw=hunter22")); string(b) != "user=ann;pw=[redacted]" {
		t.Errorf("Scrub: %s", b)
	}
}

// Text holds what it promises on any input: nothing of a secret value
// left, and applying it twice is applying it once.
func FuzzText(f *testing.F) {
	const v = "FUZZ-SECRET-2231"
	Secret(v)
	for _, s := range []string{"", "a?code=x&b=1", "https://u:p@x/?token=T0K3N99#id_token=z", `{"u":"/a?x=1\u0026auth=QQQQQQQQ"}`, "&amp;sig=" + v, v + v} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Text(s + v)
		if strings.Contains(once, v) {
			t.Fatalf("Text(%q) = %q: the secret is still there", s+v, once)
		}
		if twice := Text(once); twice != once {
			t.Fatalf("Text is not idempotent on %q: %q, then %q", s, once, twice)
		}
		_ = URL(s)
	})
}
