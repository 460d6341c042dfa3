// Package boundaries holds the test that keeps each package out of the
// rooms the README's layout says it must not enter.
package boundaries

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/headroom-agent/headroom/"

// forbidden lists, per package, what it must never link, directly or
// not: a package, or with /... a package and everything below it.
var forbidden = map[string][]string{
	"llm":                    {"llm/azuresim/...", "llm/embedded", "budget/redisstore", "github.com/redis/go-redis/...", "browser/..."},
	"budget":                 {"llm/...", "browser/...", "calltypes", "config"},
	"calltypes":              {"budget/...", "llm/...", "browser/...", "config"},
	"browser":                {"llm/...", "budget/...", "calltypes"},
	"llm/azuresim":           {"budget/...", "llm", "calltypes", "config"},
	"llm/azuresim/heuristic": {"budget/...", "llm", "config"},
	"agent":                  {"budget/redisstore", "github.com/redis/go-redis/..."},
	// The embedded default is agent's with no config, unless the binary is
	// built for real deployments alone.
	"agent -tags nosim": {"llm/azuresim/...", "llm/embedded", "budget/redisstore", "github.com/redis/go-redis/..."},
	"config":            {"llm/...", "browser/..."},
	"budget/doctor":     {"llm/...", "browser/..."},
	"budget/calibrate":  {"llm/...", "browser/...", "calltypes"},
	"budget/plan":       {"llm/...", "browser/...", "agent"},
	"budget/metrics":    {"llm/...", "browser/...", "calltypes"},
}

func TestPackagesStayInTheirRooms(t *testing.T) {
	for spec, bad := range forbidden {
		pkg, tags, _ := strings.Cut(spec, " ")
		args := append([]string{"list", "-deps"}, strings.Fields(tags)...)
		out, err := exec.Command("go", append(args, mod+pkg)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", spec, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range bad {
				full, tree := strings.CutSuffix(b, "/...")
				if !strings.Contains(full, ".") {
					full = mod + full
				}
				if dep == full || tree && strings.HasPrefix(dep, full+"/") {
					t.Errorf("%s links %s, which it must not", spec, dep)
				}
			}
		}
	}
}
