package redact

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// What pages do to a value they echo, each undone by the fold.
var echoes = map[string]func(string) string{
	"as typed":          func(v string) string { return v },
	"upper-cased (CSS)": strings.ToUpper,
	"lower-cased":       strings.ToLower,
	"NFD":               norm.NFD.String,
	"NFKC":              norm.NFKC.String,
	"padded":            func(v string) string { return "\n\t  " + v + " \u00a0 " },
	"inner newline": func(v string) string {
		r := []rune(v)
		return string(r[:len(r)/2]) + "\n" + string(r[len(r)/2:])
	},
	"a line a character": func(v string) string {
		return strings.Join(strings.Split(v, ""), "\n")
	},
	"zero-width between": func(v string) string {
		return strings.Join(strings.Split(v, ""), "\u200b")
	},
	"soft hyphens": func(v string) string { return strings.Join(strings.Split(v, ""), "\u00ad") },
	"JSON": func(v string) string {
		r := []rune(v)
		b, _ := json.Marshal("x " + string(r[:len(r)/3]) + "\n" + string(r[len(r)/3:]) + " y")
		return string(b)
	},
	"query":       url.QueryEscape,
	"path":        url.PathEscape,
	"upper query": func(v string) string { return url.QueryEscape(strings.ToUpper(v)) },
	"HTML":        template.HTMLEscapeString,
	"fullwidth":   func(v string) string { return toFullwidth(v) },
	"title-cased": func(v string) string {
		r := []rune(v)
		return strings.ToUpper(string(r[:1])) + strings.ToLower(string(r[1:]))
	},
	"in a sentence": func(v string) string { return "Welcome back, " + strings.ToUpper(v) + "! Your order shipped." },
}

// toFullwidth writes ASCII letters and digits as their fullwidth forms,
// which NFKC maps back.
func toFullwidth(v string) string {
	var b strings.Builder
	for _, r := range v {
		if r > ' ' && r < 0x7f {
			r += 0xfee0
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestASetFindsAValueWhateverThePageDidToIt(t *testing.T) {
	for _, v := range []string{"Hunter2-Quartz-99xy", "Straße-Zürich-4711", "café-crème-2041"} {
		var s Set
		if !s.Add(v, Marker) {
			t.Fatalf("Add(%q) refused", v)
		}
		for name, echo := range echoes {
			text := "before " + echo(v) + " after"
			got := s.Replace(text)
			if strings.Contains(string(fold(got).b), foldValue(v)) {
				t.Errorf("%s, %s: %q left %q", v, name, text, got)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") || !strings.Contains(got, Marker) {
				t.Errorf("%s, %s: %q became %q: what is around the value is to stay", v, name, text, got)
			}
		}
	}
}

// Straße folds to strasse: one whose page writes it STRASSE is the same.
func TestFullCaseFolding(t *testing.T) {
	var s Set
	s.Add("Straße-4711", Marker)
	if got := s.Replace("STRASSE-4711"); got != Marker {
		t.Errorf("got %q", got)
	}
}

func TestReplaceKeepsWhatIsNotTheValue(t *testing.T) {
	var s Set
	s.Add("Hunter2-Quartz-99xy", "<secret:pw>")
	for in, want := range map[string]string{
		"no secret here":                    "no secret here",
		"pw: hunter2-quartz-99xy.":          "pw: <secret:pw>.",
		"[HUNTER2-\nQUARTZ-99XY]":           "[<secret:pw>]",
		"hunter2 quartz 99xy":               "hunter2 quartz 99xy", // the dashes are part of it
		`{"a":"Hunter2-Quartz-99xy\n"}`:     `{"a":"<secret:pw>\n"}`,
		"é Hunter2-Quartz-99xy é":           "é <secret:pw> é",
		"Hunter2-Quartz-99x":                "Hunter2-Quartz-99x",
		"x=Hunter2%2DQuartz%2D99xy&y=1":     "x=<secret:pw>&y=1",
		"Hunter2&#45;Quartz&#x2d;99xy":      "<secret:pw>",
		"Hunter2-Quartz-99xyHunter2-Quartz": "<secret:pw>Hunter2-Quartz",
	} {
		if got := s.Replace(in); got != want {
			t.Errorf("Replace(%q) = %q, want %q", in, got, want)
		}
	}
}

// A secret that begins with the end of the mark or ends with its start
// must not be made again by the mark: each is removed whole.
func TestValuesThatOverlapTheMark(t *testing.T) {
	for _, v := range []string{"]Hunter2-Quartz", "Hunter2-Quartz[", "ted]Hunter2-Quartz", "Hunter2-Quartz[red", "d]ab"} {
		var s Set
		if !s.Add(v, Marker) {
			t.Fatalf("Add(%q) refused", v)
		}
		for _, text := range []string{
			"x " + v + " y",
			"[redac" + v,
			v + "acted]",
			v + v + v,
			v + strings.Repeat(v[len(v)/2:], 6),
			strings.Repeat(v[:len(v)/2], 6) + v,
			strings.ToUpper(v) + "\n" + v,
		} {
			got := s.Replace(text)
			if strings.Contains(string(fold(got).b), foldValue(v)) {
				t.Errorf("%q: %q left %q", v, text, got)
			}
			if again := s.Replace(got); again != got {
				t.Errorf("%q: Replace is not settled on %q: %q then %q", v, text, got, again)
			}
		}
	}
}

func TestUsable(t *testing.T) {
	for v, ok := range map[string]bool{
		"4711":            true,
		"abc":             false,
		"a b c":           false, // three characters once spacing is set aside
		"\u200babc\u200b": false,
		"dact":            false, // inside the mark
		"[redacted]":      false,
		"x[REDACTED]y":    false,
		"ted]Hunter":      true,
		"]abc":            true,
	} {
		if err := Usable(v); (err == nil) != ok {
			t.Errorf("Usable(%q) = %v, want ok=%v", v, err, ok)
		}
	}
}

// A key a server echoes in pieces, or in another case, is removed
// however it is cut.
func TestKeysAreFoundInPieces(t *testing.T) {
	key := "AZKEY-CANARY-7d1e2f3a4b5c9e8d"
	var s Set
	s.AddKey(key, Marker)
	half := len(key) / 2
	for _, text := range []string{
		"invalid key " + strings.ToUpper(key),
		"key begins " + key[:half] + " and ends " + key[half:],
		"key: " + strings.ToLower(key[:10]) + "..." + key[len(key)-9:],
		`{"error":"bad key ` + key[3:20] + `"}`,
	} {
		got := s.Replace(text)
		for i := 0; i+fragmentLen <= len(key); i++ {
			if run := key[i : i+fragmentLen]; mixed(run) && strings.Contains(strings.ToLower(got), strings.ToLower(run)) {
				t.Errorf("%q left %q: it holds %q of the key", text, got, key[i:i+fragmentLen])
				break
			}
		}
	}
	if got := s.Replace("AZKEY-C is not enough"); got != "AZKEY-C is not enough" {
		t.Errorf("a run shorter than a fragment was removed: %q", got)
	}
	// A run of words in a key someone named is left: it is ordinary text.
	var named Set
	named.AddKey("headroom-embedded-simulator-key", Marker)
	if got := named.Replace("the embedded stand-in of headroom-chrome"); got != "the embedded stand-in of headroom-chrome" {
		t.Errorf("words of a named key were removed: %q", got)
	}
	// A password is found whole only: its pieces are ordinary words.
	var p Set
	p.Add("correct-horse-battery-staple", Marker)
	if got := p.Replace("a correct-horse ride"); got != "a correct-horse ride" {
		t.Errorf("a piece of a password was removed: %q", got)
	}
}

func TestFoundNamesTheValuesHeld(t *testing.T) {
	var s Set
	s.Add("4711", "<secret:pin>")
	s.Add("Hunter2-Quartz", "<secret:pw>")
	got := s.Found("PIN 4 7 1 1 and hunter2-QUARTZ")
	if strings.Join(got, ",") != "4711,Hunter2-Quartz" {
		t.Errorf("Found = %q", got)
	}
}

// FuzzSecretFound echoes a value in arbitrary text, transformed as a page
// would, and requires that the value is never left.
func FuzzSecretFound(f *testing.F) {
	f.Add("Hunter2-Quartz-99xy", "before ", " after", uint8(1))
	f.Add("]abc]", "[redac", "acted]", uint8(0))
	f.Add("d]ab", "", "abababab", uint8(2))
	f.Add("ab[re", "ababab", "", uint8(3))
	names := make([]string, 0, len(echoes))
	for n := range echoes {
		names = append(names, n)
	}
	slices.Sort(names)
	f.Fuzz(func(t *testing.T, v, before, after string, how uint8) {
		var s Set
		if !s.Add(v, Marker) {
			return
		}
		echo := echoes[names[int(how)%len(names)]]
		if len(v) < 2 {
			return
		}
		got := s.Replace(before + echo(v) + after)
		if strings.Contains(string(fold(got).b), foldValue(v)) {
			t.Fatalf("value %q, %s: %q left %q", v, names[int(how)%len(names)], before+echo(v)+after, got)
		}
	})
}

// BenchmarkReplace is the cost of scrubbing a prompt-sized text (8 KiB of
// a page's lines) of a run's few secrets.
func BenchmarkReplace(b *testing.B) {
	var s Set
	for _, v := range []string{"Hunter2-Quartz-99xy", "AZKEY-CANARY-7d1e2f3a4b5c9e8d", "session-0f3a9c1d22", "4711", "Straße-Zürich"} {
		s.Add(v, Marker)
	}
	s.AddKey("0123456789abcdef0123456789abcdef", Marker)
	line := `[12] link "Walnut dresser" href=/p/301` + "\n" + `(301) 330 EUR Add to cart | Größe: 40 × 60 cm` + "\n"
	text := strings.Repeat(line, 8192/len(line))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Replace(text)
	}
}

// A value a page writes a character an element, or across two lines of
// its own, is found across the ends of the texts that hold it.
func TestReplaceAllAcrossTexts(t *testing.T) {
	var s Set
	s.Add("Hunter2-Quartz", "<secret:pw>")
	in := []string{"Welcome", "HUN", "TER2-", "q", "uartz", "back", "hunter2-quartz!"}
	out, held := s.ReplaceAll(in)
	want := []string{"Welcome", "<secret:pw>", "", "", "", "back", "<secret:pw>!"}
	if strings.Join(out, "|") != strings.Join(want, "|") {
		t.Errorf("ReplaceAll = %q, want %q", out, want)
	}
	for i, h := range held {
		if got, wantHeld := len(h) > 0, i >= 1 && i <= 4 || i == 6; got != wantHeld {
			t.Errorf("held[%d] = %q", i, h)
		}
	}
	// A value inside one text, and one that begins mid-text.
	out, _ = s.ReplaceAll([]string{"pw is Hunter2-", "Quartz, ok"})
	if strings.Join(out, "|") != "pw is <secret:pw>|, ok" {
		t.Errorf("ReplaceAll = %q", out)
	}
}

// A set is read while values join it and change what replaces them: the
// race detector holds it to that.
func TestASetIsSafeForConcurrentUse(t *testing.T) {
	var s Set
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			s.Add(fmt.Sprintf("value-%04d-x", i%20), fmt.Sprintf("<%d>", i%3))
			s.AddKey(fmt.Sprintf("key-%04d-0123456789abcdef", i%10), Marker)
		}
	}()
	for range 200 {
		s.Replace("value-0003-x and key-0004-0123456789abcdef")
		s.ReplaceAll([]string{"value-00", "03-x"})
	}
	<-done
	if got := s.Replace("value-0003-x"); got == "value-0003-x" {
		t.Errorf("the value was not replaced: %q", got)
	}
}
