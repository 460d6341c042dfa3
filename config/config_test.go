package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redact"
)

const base = "deployments:\n  - {name: d, endpoint: \"https://d.openai.azure.com\", tpm: 10000, auth: {api_key_env: K}}\n"

func TestParseReadsEveryPart(t *testing.T) {
	f, _, err := config.Parse("headroom.yaml", []byte("margin: 0.9\ninteractive_floor: 0\n"+base+"calltypes:\n  yes-no: {max_tokens: 48}\n  click-pick: {page_tokens: 1500}\n  planning: {view: words}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Budget.Margin != 0.9 || *f.Budget.InteractiveFloor != 0 || len(f.Budget.Deployments) != 1 || f.Budget.Deployments[0].RPM != 60 {
		t.Errorf("budget part = %+v", f.Budget)
	}
	types := calltypes.Default()
	if err := f.Apply(types); err != nil {
		t.Fatal(err)
	}
	if yn, _ := types.Lookup(calltypes.YesNo); yn.MaxTokens != 48 {
		t.Errorf("yes-no cap %d, want 48", yn.MaxTokens)
	}
	if cp, _ := types.Lookup(calltypes.ClickPick); cp.PageTokens != 1500 || cp.View != calltypes.ViewPage {
		t.Errorf("click-pick page %d tokens, view %s; want 1500, page", cp.PageTokens, cp.View)
	}
	if pl, _ := types.Lookup(calltypes.Planning); pl.View != calltypes.ViewWords {
		t.Errorf("planning view %s, want words", pl.View)
	}
}

func TestErrorsNameFileLineAndField(t *testing.T) {
	for src, want := range map[string]string{
		base + "calltypes:\n  yes-no: {max_tokenz: 48}\n":         `headroom.yaml:4`,
		base + "colour: blue\n":                                   `headroom.yaml:3`,
		"margin: 7\n" + base:                                      `headroom.yaml:1: margin: 7 is not a share`,
		base + "calltypes:\n  extract-tabel: {max_tokens: 100}\n": `headroom.yaml:4: calltypes.extract-tabel: `,
		base + "calltypes:\n  yes-no: {max_tokens: 999999}\n":     `headroom.yaml:4: calltypes.yes-no: `,
		base + "calltypes:\n  yes-no: {view: pixels}\n":           `headroom.yaml:4: calltypes.yes-no: calltypes: yes-no: view "pixels" is unknown`,
		base + "calltypes:\n  yes-no: {page_tokens: 20}\n":        `headroom.yaml:4: calltypes.yes-no: calltypes: yes-no: page_tokens 20 leaves no room`,
		base + "redact: [x-tenant, \"--\"]\n":                     `headroom.yaml:3: redact[1]: "--" is not a name`,
	} {
		f, _, err := config.Parse("headroom.yaml", []byte(src))
		if err == nil {
			err = f.Apply(calltypes.Default())
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

func TestLoadRefusesWhatIsNotAConfig(t *testing.T) {
	if _, _, err := config.Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Load(big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("2 MiB file: %v", err)
	}
	if _, _, err := config.Load("../testdata/configs/headroom.yaml"); err != nil {
		t.Errorf("the sample config: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(base + "calltypes:\n  yes-no: {max_tokens: 48}\n"))
	f.Add([]byte("margin: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := config.Parse("f.yaml", data)
		if err != nil {
			return
		}
		_ = c.Apply(calltypes.Default())
	})
}

func TestParseNamesTheFieldOfATypeError(t *testing.T) {
	src := "deployments:\n  - name: a\n    endpoint: https://a.openai.azure.com\n    tpm: \"lots\"\n"
	_, _, err := config.Parse("c.yaml", []byte(src))
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:4: deployments[0].tpm: ") {
		t.Errorf("Parse = %v", err)
	}
	_, _, err = config.Parse("c.yaml", []byte("redis: redis://x/\n---\nredis: redis://y/\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:2: a second YAML document") {
		t.Errorf("two documents: %v", err)
	}
}

func TestRedactNamesReachTheProcessList(t *testing.T) {
	f, _, err := config.Parse("headroom.yaml", []byte(base+"redact: [X-Billing-Ref]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if redact.IsSecretName("x_billing_ref") {
		t.Fatal("secret before Apply")
	}
	if err := f.Apply(calltypes.Default()); err != nil {
		t.Fatal(err)
	}
	if !redact.IsSecretName("x_billing_ref") {
		t.Error("a config's redact name is not secret after Apply")
	}
}

func TestFallbacksNameAPoolOfTheFile(t *testing.T) {
	two := base + "  - {name: s, endpoint: \"https://s.openai.azure.com\", model: o4-mini, pool: small, tpm: 10000, auth: {api_key_env: K}}\n"
	f, _, err := config.Parse("headroom.yaml", []byte(two+"fallback: {pool: small}\ncalltypes:\n  yes-no: {fallback: small}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Fallback.ShareOrDefault() != config.DefaultShare {
		t.Errorf("share %v, want the default %v", f.Fallback.ShareOrDefault(), config.DefaultShare)
	}
	for src, want := range map[string]string{
		two + "fallback: {pool: tiny}\n":                    `headroom.yaml:4: fallback.pool: no pool "tiny": the pools are [default small]`,
		two + "fallback: {pool: default}\n":                 `fallback.pool: the fallback is the default pool itself`,
		two + "fallback: {pool: small, share: 2}\n":         `fallback.share: 2 is not a share`,
		two + "fallback: {share: 0.1}\n":                    `fallback.pool: a fallback names its pool`,
		two + "calltypes:\n  yes-no: {fallback: nowhere}\n": `calltypes.yes-no.fallback: no pool "nowhere"`,
	} {
		if _, _, err := config.Parse("headroom.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestPathAndRead: the flag's file, else $HEADROOM_CONFIG's, else none.
func TestPathAndRead(t *testing.T) {
	t.Setenv(config.Env, "from-env.yaml")
	if got := config.Path("flag.yaml"); got != "flag.yaml" {
		t.Errorf("Path with a flag = %q", got)
	}
	if got := config.Path(""); got != "from-env.yaml" {
		t.Errorf("Path with none = %q, want the environment's", got)
	}
	t.Setenv(config.Env, "")
	if f, file, w, err := config.Read(""); f != nil || file != "" || w != nil || err != nil {
		t.Errorf("Read with neither = %v %q %v %v, want nothing", f, file, w, err)
	}
	if _, file, _, err := config.Read("/nonexistent/headroom.yaml"); file != "/nonexistent/headroom.yaml" || err == nil {
		t.Errorf("Read of a missing file = %q, %v", file, err)
	}
}
