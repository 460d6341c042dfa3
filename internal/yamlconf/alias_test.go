package yamlconf

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// bomb is levels of anchors, each a list of width aliases to the one
// before: a few hundred bytes standing for width^(levels+1) values.
func bomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("items:\n  - &l0 [" + strings.TrimSuffix(strings.Repeat(`"lol",`, width), ",") + "]\n")
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "  - &l%d [%s]\n", l, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", l-1), width), ","))
	}
	return b.String()
}

func TestAliasesAreCountedAsTheyExpand(t *testing.T) {
	for _, c := range []struct {
		levels, width int
		refused       bool
	}{
		{4, 9, false}, // 66,430 values: big, but bounded
		{6, 9, true},  // 5.4 million
		{7, 9, true},  // the 383-byte file of 8 levels: 48 million
		{60, 2, true}, // 2^61: a count that would overflow
	} {
		src := bomb(c.levels, c.width)
		var v any
		_, err := Decode("bomb.yaml", []byte(src), &v)
		var e *Error
		switch {
		case c.refused && (!errors.As(err, &e) || e.Line < 3 || e.Line > c.levels+2 || !strings.Contains(err.Error(), "aliases expand to more than")):
			// The line is the alias whose values took the count past the bound.
			t.Errorf("%d levels of %d (%d bytes): %v; want a refusal at an alias's line", c.levels, c.width, len(src), err)
		case !c.refused && err != nil:
			t.Errorf("%d levels of %d: %v", c.levels, c.width, err)
		}
	}
}

// Anchors and aliases as people use them still work, merges included;
// an alias names the last anchor of its name before it.
func TestAliasesAsPeopleUseThem(t *testing.T) {
	src := "defaults: &d {tpm: 5}\nitems:\n  - {<<: *d, name: a}\n  - &x {name: b, tpm: 1}\n  - *x\n  - &x {name: c, tpm: 2}\n  - *x\n"
	var v struct {
		Defaults item   `yaml:"defaults"`
		Items    []item `yaml:"items"`
	}
	if _, err := Decode("ok.yaml", []byte(src), &v); err != nil {
		t.Fatal(err)
	}
	want := []item{{"a", 5}, {"b", 1}, {"b", 1}, {"c", 2}, {"c", 2}}
	if fmt.Sprint(v.Items) != fmt.Sprint(want) {
		t.Errorf("items = %v, want %v", v.Items, want)
	}
}

// Any shape of aliases to aliases is refused when it stands for far more
// values than the bound and read when it stands for far fewer, and the
// refusal names the file: go test -fuzz FuzzAliasBound ./internal/yamlconf
func FuzzAliasBound(f *testing.F) {
	f.Add(uint8(4), uint8(9))
	f.Add(uint8(6), uint8(9))
	f.Add(uint8(7), uint8(9))
	f.Add(uint8(60), uint8(2))
	f.Add(uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, levels, width uint8) {
		l, w := int(levels%64), int(width%16)+1
		// What the bomb stands for: each level a list of width of the one
		// before, in floating point, as it can pass any integer.
		values, level := 0.0, float64(w+1)
		for range l + 1 {
			values += level
			level = 1 + float64(w)*level
		}
		var v any
		_, err := Decode("bomb.yaml", []byte(bomb(l, w)), &v)
		switch {
		case values > 2*MaxValues && (err == nil || !strings.HasPrefix(err.Error(), "bomb.yaml:")):
			t.Fatalf("%d levels of %d (%.3g values) read: %v", l, w, values, err)
		case values < MaxValues/2 && err != nil:
			t.Fatalf("%d levels of %d (%.3g values) refused: %v", l, w, values, err)
		}
	})
}
