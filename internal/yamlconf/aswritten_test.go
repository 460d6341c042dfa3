package yamlconf

import "testing"

// A number or a boolean is given back as typed, where the YAML library
// would read 0042 as octal and drop a float's last zero.
func TestAsWritten(t *testing.T) {
	var v struct {
		P map[string]*string `yaml:"p"`
	}
	doc, err := Decode("f.yaml", []byte("p: {a: 0042, b: 1.50, c: true, d: !!str 0x10, e: text, f: ~}\n"), &v)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"p.a": "0042", "p.b": "1.50", "p.c": "true", "p.d": "0x10"} {
		if got, ok := doc.AsWritten(path); !ok || got != want {
			t.Errorf("AsWritten(%s) = %q, %v; want %q", path, got, ok, want)
		}
	}
	for _, path := range []string{"p.e", "p.f", "p.g", "p"} {
		if got, ok := doc.AsWritten(path); ok {
			t.Errorf("AsWritten(%s) = %q: not a number or boolean", path, got)
		}
	}
	if got, ok := doc.Sub("p").AsWritten("a"); !ok || got != "0042" {
		t.Errorf("within a part: %q, %v", got, ok)
	}
}
