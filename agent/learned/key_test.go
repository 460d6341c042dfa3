package learned_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/agent/learned"
)

var keyShape = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$`)

func TestCheckKeyErrors(t *testing.T) {
	for key, want := range map[string]string{
		"":                       "empty key",
		".x":                     `".x" starts with '.'`,
		"a/b":                    `"a/b" has '/' at byte 1`,
		"caf\u00e9":              `has 'é' at byte 3`,
		strings.Repeat("k", 201): "is 201 bytes",
	} {
		err := learned.CheckKey(key)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "A-Z a-z 0-9 . _ -") {
			t.Errorf("CheckKey(%.20q) = %v, want it to say %s and the rule", key, err, want)
		}
	}
}

func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{"login.v1", "a", ".", "..", "a/b", "../x", "é", "a\x00", strings.Repeat("k", 200), strings.Repeat("k", 201)} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := learned.CheckKey(key)
		if (err == nil) != keyShape.MatchString(key) {
			t.Fatalf("CheckKey(%q) = %v, the rule says %v", key, err, keyShape.MatchString(key))
		}
		if err != nil {
			if !utf8.ValidString(err.Error()) || len(err.Error()) > 1200 {
				t.Fatalf("error %q", err)
			}
			return
		}
		// A good key is one file name in the store's directory.
		if name := key + ".json"; filepath.Base(name) != name || filepath.Clean(name) != name {
			t.Fatalf("key %q leaves the directory", key)
		}
	})
}
