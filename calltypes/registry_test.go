package calltypes

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// custom is a valid user type to vary in the tests.
func custom() Type {
	return Type{
		Name:      "extract-price",
		MaxTokens: 32,
		System:    "Read the price.",
		Schema:    object(map[string]any{"price": map[string]any{"type": "number"}}),
		Parse: JSONParser[struct {
			Price float64 `json:"price"`
		}](nil),
	}
}

func TestDefaultHoldsTheBuiltinsInOrder(t *testing.T) {
	var names []string
	for _, ty := range Default().Types() {
		names = append(names, ty.Name)
		if ty.N != 1 || ty.AllowN || ty.Temperature != 0 || ty.Priority != Interactive {
			t.Errorf("%s: n %d, allow_n %v, temperature %v, priority %q; want 1, false, 0, interactive", ty.Name, ty.N, ty.AllowN, ty.Temperature, ty.Priority)
		}
		if ty.System == "" || ty.Parse == nil || ty.Schema == nil {
			t.Errorf("%s: missing system prompt, parser or schema", ty.Name)
		}
	}
	if got := strings.Join(names, " "); got != "planning click-pick yes-no summarize" {
		t.Errorf("built-ins: %s", got)
	}
	if _, ok := Default().Lookup("no-such-type"); ok {
		t.Error("Lookup found a type that was never registered")
	}
}

func TestRegisterFillsDefaults(t *testing.T) {
	var r Registry // the zero value is usable
	if err := r.Register(custom()); err != nil {
		t.Fatal(err)
	}
	ty, ok := r.Lookup("extract-price")
	if !ok || ty.N != 1 || ty.Priority != Interactive || ty.MaxTokens != 32 {
		t.Errorf("got %+v, %v; want n 1, interactive, cap 32", ty, ok)
	}
	if r.ModelLimit() != DefaultModelLimit {
		t.Errorf("model limit %d, want %d", r.ModelLimit(), DefaultModelLimit)
	}
}

func TestRegisterRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Type)
		want string
	}{
		{"no name", func(t *Type) { t.Name = "" }, "needs a name"},
		{"bad name", func(t *Type) { t.Name = "click pick" }, "letters, digits"},
		{"duplicate", func(t *Type) { t.Name = ClickPick }, `"click-pick" is already registered`},
		{"zero cap", func(t *Type) { t.MaxTokens = 0 }, "max_tokens 0 is not positive"},
		{"negative cap", func(t *Type) { t.MaxTokens = -5 }, "max_tokens -5 is not positive"},
		{"cap above model", func(t *Type) { t.MaxTokens = 16385 }, "above the model's output limit 16384"},
		{"n without opt-in", func(t *Type) { t.N = 3 }, "n 3 needs allow_n"},
		{"negative n", func(t *Type) { t.N = -1 }, "n -1 is negative"},
		{"no parser", func(t *Type) { t.Parse = nil }, "no Parse func"},
		{"no schema", func(t *Type) { t.Schema = nil }, "no Schema"},
		{"unknown priority", func(t *Type) { t.Priority = "urgent" }, `priority "urgent" is unknown`},
		{"temperature", func(t *Type) { t.Temperature = 2.5 }, "temperature 2.5 is outside 0 to 2"},
		{"NaN temperature", func(t *Type) { t.Temperature = math.NaN() }, "temperature NaN"},
		{"open object", func(t *Type) { t.Schema["additionalProperties"] = true }, `"additionalProperties": false`},
		{"optional property", func(t *Type) { t.Schema["required"] = []string{} }, `property "price" is not in "required"`},
		{"root not object", func(t *Type) { t.Schema = map[string]any{"type": "string"} }, "root must be"},
		{"nested open object", func(t *Type) {
			t.Schema = object(map[string]any{"items": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}, "required": []any{"x"},
			}}})
		}, `#/properties/items/items: set "additionalProperties": false`},
	}
	for _, c := range cases {
		r := Default()
		ty := custom()
		c.edit(&ty)
		err := r.Register(ty)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
		if len(r.Types()) != 4 {
			t.Errorf("%s: a refused type was registered", c.name)
		}
	}
}

func TestAllowNIsLogged(t *testing.T) {
	var logged []string
	r := NewRegistry()
	r.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	ty := custom()
	ty.N, ty.AllowN = 3, true
	if err := r.Register(ty); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "n=3") || !strings.Contains(logged[0], "96 tokens") {
		t.Errorf("logged %q, want the n=3 opt-in and its 96-token charge", logged)
	}
}

func TestOverride(t *testing.T) {
	var logged []string
	r := Default()
	r.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }

	// As a config file gives them.
	var cfg map[string]Override
	_, err := yamlconf.Decode("headroom.yaml", []byte("summarize:\n  max_tokens: 1200\n  temperature: 0.3\n  priority: background\nyes-no:\n  n: 3\n  allow_n: true\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range cfg {
		if err := r.Override(name, o); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := r.Lookup(Summarize)
	if s.MaxTokens != 1200 || s.Temperature != 0.3 || s.Priority != Background || s.N != 1 || s.Parse == nil {
		t.Errorf("summarize after override: %+v", s)
	}
	y, _ := r.Lookup(YesNo)
	if y.N != 3 || !y.AllowN || y.MaxTokens != yesNoCap {
		t.Errorf("yes-no after override: n %d, allow_n %v, cap %d", y.N, y.AllowN, y.MaxTokens)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "yes-no asks for n=3") {
		t.Errorf("logged %q, want the yes-no n=3 opt-in", logged)
	}
	if got := r.Types()[3].Name; got != Summarize {
		t.Errorf("an override moved a type: position 3 holds %s", got)
	}

	err = r.Override("click", Override{MaxTokens: 64})
	if err == nil || !strings.Contains(err.Error(), `"click"`) || !strings.Contains(err.Error(), "planning, click-pick, yes-no, summarize") {
		t.Errorf("unknown type: err = %v, want it named and the known types listed", err)
	}

	zero := 0.0
	bad := []struct {
		o    Override
		want string
	}{
		{Override{N: 2}, "n 2 needs allow_n"},
		{Override{MaxTokens: 20000}, "above the model's output limit"},
		{Override{MaxTokens: -1}, "not positive"},
		{Override{Priority: "later"}, `priority "later" is unknown`},
	}
	for _, b := range bad {
		err := r.Override(ClickPick, b.o)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("override %+v: err = %v, want %q", b.o, err, b.want)
		}
	}
	if err := r.Override(ClickPick, Override{Temperature: &zero}); err != nil {
		t.Fatal(err)
	}
	if c, _ := r.Lookup(ClickPick); c.MaxTokens != clickPickCap || c.N != 1 || c.Priority != Interactive {
		t.Errorf("refused overrides changed click-pick: %+v", c)
	}
}

func TestModelLimit(t *testing.T) {
	var logged []string
	r := Default()
	r.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	r.SetModelLimit(512)
	if len(logged) != 1 || !strings.Contains(logged[0], "summarize has max_tokens 880, above the model limit 512") {
		t.Errorf("logged %q, want summarize reported above the new limit", logged)
	}
	if err := r.Override(Planning, Override{MaxTokens: 600}); err == nil || !strings.Contains(err.Error(), "limit 512") {
		t.Errorf("override above the lowered limit: err = %v", err)
	}
	r.SetModelLimit(0)
	if r.ModelLimit() != DefaultModelLimit {
		t.Errorf("SetModelLimit(0) left %d, want the default", r.ModelLimit())
	}
}

func TestRegistryIsSafeForConcurrentUse(t *testing.T) {
	r := Default()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				_ = r.Override(ClickPick, Override{MaxTokens: int64(100 + j)})
				if ty, ok := r.Lookup(ClickPick); !ok || ty.MaxTokens < 100 {
					t.Errorf("lookup during overrides: %+v", ty)
				}
				_ = r.Types()
				if j == 50 {
					_ = r.Register(Type{Name: fmt.Sprintf("t%d", i), MaxTokens: 8, Schema: object(nil), Parse: JSONParser[struct{}](nil)})
				}
			}
		})
	}
	wg.Wait()
	if n := len(r.Types()); n != 12 {
		t.Errorf("%d types, want 12", n)
	}
}
