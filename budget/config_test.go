package budget_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	configfile "github.com/headroom-agent/headroom/config"
)

const fullConfig = `redis: redis://10.0.0.5:6379/2
margin: 0.9
refund: refund
window: 6s
interactive_floor: 0.25
affinity_threshold: 0.5
deployments:
  - name: east-4o
    endpoint: https://Contoso-East.openai.azure.com/
    deployment: gpt4o-prod
    api_version: 2025-01-01-preview
    model: gpt-4o
    model_version: "2024-08-06"
    region: eastus
    subscription: sub-1
    type: global-standard
    tpm: 450000
    rpm: 2700
    auth:
      api_key_env: AZURE_OPENAI_EAST_KEY
    weight: 2
    priority: 1
    pool: planner
  - name: west-4o
    endpoint: http://127.0.0.1:8089
    model: gpt-4o
    model_version: "2024-08-06"
    tpm: 60000
    auth:
      entra: true
    pool: planner
  - name: reasoner
    endpoint: https://contoso-swe.openai.azure.com
    model: o3-mini
    model_version: "2025-01-31"
    region: swedencentral
    subscription: sub-1
    type: data-zone
    tpm: 100000
    auth:
      entra: true
    pool: reasoning
`

// parseConfig reads a config's budget part as package config reads the
// whole file.
func parseConfig(name string, data []byte) (*budget.Config, []budget.Warning, error) {
	f, ws, err := configfile.Parse(name, data)
	if err != nil {
		return nil, ws, err
	}
	return &f.Budget, ws, nil
}

// loadConfig is parseConfig for a file on disk.
func loadConfig(path string) (*budget.Config, []budget.Warning, error) {
	f, ws, err := configfile.Load(path)
	if err != nil {
		return nil, ws, err
	}
	return &f.Budget, ws, nil
}

func TestParseConfigFull(t *testing.T) {
	c, ws, err := parseConfig("headroom.yaml", []byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 0 {
		t.Errorf("warnings %v, want none", ws)
	}
	if c.Redis != "redis://10.0.0.5:6379/2" || c.Margin != 0.9 || c.Refund != budget.Refund ||
		c.Window != 6*time.Second || *c.InteractiveFloor != 0.25 || *c.AffinityThreshold != 0.5 {
		t.Errorf("top level = %+v", c)
	}
	if len(c.Deployments) != 3 {
		t.Fatalf("%d deployments, want 3", len(c.Deployments))
	}
	east := c.Deployments[0]
	want := budget.Deployment{
		Name: "east-4o", Endpoint: "https://Contoso-East.openai.azure.com/", Deployment: "gpt4o-prod",
		APIVersion: "2025-01-01-preview", Model: "gpt-4o", ModelVersion: "2024-08-06", Family: models.Chat,
		Region: "eastus", Subscription: "sub-1", Type: "global-standard", TPM: 450000, RPM: 2700,
		Auth: budget.Auth{APIKeyEnv: "AZURE_OPENAI_EAST_KEY"}, Weight: 2, Priority: 1, Pool: "planner",
		QuotaKey: "east-4o", QuotaTPM: 450000, QuotaRPM: 2700,
	}
	if east != want {
		t.Errorf("deployments[0] =\n%+v, want\n%+v", east, want)
	}
	if got := east.Resource(); got != "https://contoso-east.openai.azure.com" {
		t.Errorf("Resource() = %q", got)
	}
	if got := east.Limits(c.Margin); got != (budget.Limits{Tokens: 450000, Requests: 2700, Margin: 0.9}) {
		t.Errorf("Limits = %+v", got)
	}

	// Defaults filled in place.
	west := c.Deployments[1]
	if west.Deployment != "west-4o" || west.APIVersion != "2024-10-21" || west.Type != "standard" ||
		west.RPM != 360 || west.Weight != 1 || west.Priority != 0 || west.QuotaKey != "west-4o" ||
		west.QuotaTPM != 60000 || west.QuotaRPM != 360 {
		t.Errorf("deployments[1] defaults = %+v", west)
	}
	if r := c.Deployments[2]; r.RPM != 10 || r.QuotaRPM != 10 {
		t.Errorf("o3-mini 100000 TPM: RPM %d, quota RPM %d, want 10", r.RPM, r.QuotaRPM)
	}

	pools := c.Pools()
	if len(pools) != 2 || len(pools["planner"]) != 2 || pools["planner"][0].Name != "east-4o" ||
		pools["planner"][1].Name != "west-4o" || len(pools["reasoning"]) != 1 {
		t.Errorf("Pools() = %v", pools)
	}
	if pools["planner"][1] != &c.Deployments[1] {
		t.Error("Pools() does not point into Deployments")
	}
}

func TestParseConfigDefaults(t *testing.T) {
	src := "deployments:\n  - name: a\n    endpoint: https://a.openai.azure.com\n    model: gpt-4o\n    tpm: 60000\n    auth: {entra: true}\n"
	c, _, err := parseConfig("d.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis != "" || c.Margin != budget.DefaultMargin || c.Refund != budget.Hold || c.Window != budget.DefaultWindow ||
		*c.InteractiveFloor != 0.10 || *c.AffinityThreshold != 0.2 {
		t.Errorf("defaults = %+v", c)
	}
	d := c.Deployments[0]
	if d.Pool != "default" || d.RPM != 360 || d.Weight != 1 || d.Type != "standard" || d.APIVersion != "2024-10-21" || d.Deployment != "a" {
		t.Errorf("deployment defaults = %+v", d)
	}
}

func TestParseConfigExplicitZeroKept(t *testing.T) {
	src := "interactive_floor: 0\naffinity_threshold: 0\ndeployments:\n  - name: a\n    endpoint: https://a.openai.azure.com\n    tpm: 1000\n    auth: {entra: true}\n"
	c, _, err := parseConfig("z.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if *c.InteractiveFloor != 0 || *c.AffinityThreshold != 0 {
		t.Errorf("explicit zeros became %v, %v", *c.InteractiveFloor, *c.AffinityThreshold)
	}
	if _, err := c.Validate(); err != nil || *c.InteractiveFloor != 0 || *c.AffinityThreshold != 0 {
		t.Errorf("Validate again: %v; floor %v, threshold %v", err, *c.InteractiveFloor, *c.AffinityThreshold)
	}
}

func TestDefaultRPMFromConfig(t *testing.T) {
	for _, c := range []struct {
		model string
		tpm   int64
		want  int64
	}{
		{"gpt-4o", 60000, 360},
		{"o3-mini", 100000, 10},
	} {
		cfg := budget.Config{Deployments: []budget.Deployment{{
			Name: "d", Endpoint: "https://x.openai.azure.com", Model: c.model, TPM: c.tpm, Auth: budget.Auth{Entra: true},
		}}}
		if _, err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if d := cfg.Deployments[0]; d.RPM != c.want || d.QuotaRPM != c.want {
			t.Errorf("%s at %d TPM: RPM %d, quota RPM %d, want %d", c.model, c.tpm, d.RPM, d.QuotaRPM, c.want)
		}
	}
}

// base is a valid deployment entry; cases append fields or replace it.
const base = "deployments:\n" +
	"  - name: a\n" + // line 2
	"    endpoint: https://a.openai.azure.com\n" +
	"    model: gpt-4o\n" +
	"    tpm: 60000\n" +
	"    auth: {entra: true}\n" // line 6

func TestParseConfigErrors(t *testing.T) {
	second := func(fields string) string {
		return base + "  - name: b\n" + fields // "  - name: b" is line 7
	}
	cases := []struct {
		name, src, prefix, says string
	}{
		{"no deployments", "margin: 0.5\ndeployments: []\n", "c.yaml:2: deployments: ", "at least one"},
		{"no deployments key", "margin: 0.5\n", "c.yaml: deployments: ", "at least one"},
		{"empty name", "deployments:\n  - name: \"\"\n    endpoint: https://a.openai.azure.com\n", "c.yaml:2: deployments[0].name: ", "needs a name"},
		{"duplicate name", second("    endpoint: https://b.openai.azure.com\n    model: gpt-4o\n    tpm: 1\n    auth: {entra: true}\n") + "  - name: a\n", "c.yaml:12: deployments[2].name: ", "unique"},
		{"missing endpoint", second("    tpm: 1000\n"), "c.yaml:7: deployments[1].endpoint: ", "required"},
		{"relative endpoint", second("    endpoint: a.openai.azure.com\n"), "c.yaml:8: deployments[1].endpoint: ", "absolute URL"},
		{"http not loopback", second("    endpoint: http://a.openai.azure.com\n"), "c.yaml:8: deployments[1].endpoint: ", "use https"},
		{"ftp", second("    endpoint: ftp://a.openai.azure.com\n"), "c.yaml:8: deployments[1].endpoint: ", "use https"},
		{"query", second("    endpoint: https://a.openai.azure.com/?api-version=1\n"), "c.yaml:8: deployments[1].endpoint: ", "query or fragment"},
		{"fragment", second("    endpoint: https://a.openai.azure.com/#x\n"), "c.yaml:8: deployments[1].endpoint: ", "query or fragment"},
		{"missing tpm", second("    endpoint: https://b.openai.azure.com\n    auth: {entra: true}\n"), "c.yaml:7: deployments[1].tpm: ", "missing limits"},
		{"negative tpm", second("    endpoint: https://b.openai.azure.com\n    tpm: -5\n"), "c.yaml:9: deployments[1].tpm: ", "above zero"},
		{"negative rpm", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    rpm: -1\n"), "c.yaml:10: deployments[1].rpm: ", "negative"},
		{"negative weight", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    weight: -1\n"), "c.yaml:10: deployments[1].weight: ", "at least 0"},
		{"nan weight", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    weight: .nan\n"), "c.yaml:10: deployments[1].weight: ", "at least 0"},
		{"bad type", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    type: ptu\n"), "c.yaml:10: deployments[1].type: ", "standard, global-standard, data-zone or provisioned"},
		{"no auth", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n"), "c.yaml:7: deployments[1].auth: ", "api_key_env"},
		{"both auths", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    auth:\n      api_key_env: KEY\n      entra: true\n"), "c.yaml:11: deployments[1].auth: ", "not both"},
		{"margin zero", "margin: 0\n" + base, "", ""}, // 0 is the default: valid
		{"margin above one", "margin: 1.5\n" + base, "c.yaml:1: margin: ", "at most 1"},
		{"margin negative", "margin: -0.1\n" + base, "c.yaml:1: margin: ", "above 0"},
		{"refund", "refund: release\n" + base, "c.yaml:1: refund: ", "hold or refund"},
		{"window negative", "window: -1s\n" + base, "c.yaml:1: window: ", "too short"},
		{"window short", "window: 10ms\n" + base, "c.yaml:1: window: ", "at least 60ms"},
		{"floor one", "interactive_floor: 1\n" + base, "c.yaml:1: interactive_floor: ", "not including, 1"},
		{"floor negative", "interactive_floor: -0.1\n" + base, "c.yaml:1: interactive_floor: ", "from 0"},
		{"affinity above one", "affinity_threshold: 1.01\n" + base, "c.yaml:1: affinity_threshold: ", "from 0 to 1"},
		{"affinity one", "affinity_threshold: 1\n" + base, "", ""},
		{"redis scheme", "redis: http://r:6379\n" + base, "c.yaml:1: redis: ", "redis://"},
		{"redis cluster scheme", "redis: redis-cluster://r:6379\n" + base, "c.yaml:1: redis: ", "redis+cluster://host:port"},
		{"redis unix cluster scheme", "redis: unix+cluster:///tmp/r.sock\n" + base, "c.yaml:1: redis: ", "redis+cluster://host:port"},
		{"redis cluster database", "redis: redis://10.0.0.5:7000/2?addr=10.0.0.6:7001\n" + base, "c.yaml:1: redis: ", "database 2 on a Redis Cluster"},
		{"redis cluster seed database", "redis: redis+cluster://cfg.example:6379/3\n" + base, "c.yaml:1: redis: ", "database 3 on a Redis Cluster"},
		{"redis cluster db parameter", "redis: rediss+cluster://cfg.example:6379?db=4\n" + base, "c.yaml:1: redis: ", "database 4 on a Redis Cluster"},
		{"redis cluster database 0", "redis: redis+cluster://cfg.example:6379/0\n" + base, "", ""},
		{"redis cluster no host", "redis: redis+cluster:///0\n" + base, "c.yaml:1: redis: ", "redis+cluster://host:port"},
		{"redis cluster addr without port", "redis: redis://10.0.0.5:7000?addr=10.0.0.6\n" + base, "c.yaml:1: redis: ", "addr=10.0.0.6 is not host:port"},
		{"redis cluster addr bad port", "redis: redis://10.0.0.5:7000?addr=10.0.0.6:70000\n" + base, "c.yaml:1: redis: ", "addr=10.0.0.6:70000 is not host:port"},
		{"redis unix addr", "redis: unix:///tmp/r.sock?addr=10.0.0.6:7001\n" + base, "c.yaml:1: redis: ", "unix socket"},
		{"mixed models", second("    endpoint: https://b.openai.azure.com\n    model: gpt-4o-mini\n    tpm: 5\n    auth: {entra: true}\n"),
			"c.yaml:9: deployments[1].model: ", `"a" is "gpt-4o" but "b" is "gpt-4o-mini"`},
		{"mixed versions", "deployments:\n  - name: a\n    endpoint: https://a.openai.azure.com\n    model: gpt-4o\n    model_version: \"2024-08-06\"\n    tpm: 5\n    auth: {entra: true}\n" +
			"  - name: b\n    endpoint: https://b.openai.azure.com\n    model: gpt-4o\n    model_version: \"2024-11-20\"\n    tpm: 5\n    auth: {entra: true}\n",
			"c.yaml:11: deployments[1].model_version: ", `"2024-08-06" but "b" is version "2024-11-20"`},
		{"mixed models in other pools is fine", second("    endpoint: https://b.openai.azure.com\n    model: o3-mini\n    pool: reasoning\n    tpm: 5\n    auth: {entra: true}\n"), "", ""},
		{"unknown field", second("    endpoint: https://b.openai.azure.com\n    tpm: 5\n    auth:\n      api_key: KEY\n"), "c.yaml:11:", `unknown field "api_key"`},
		{"wrong type", "margin: lots\n" + base, "c.yaml:1:", ""},
		{"duplicate key", "margin: 0.5\nmargin: 0.6\n" + base, "c.yaml:2:", ""},
		{"syntax", "deployments: [\n", "c.yaml:", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := parseConfig("c.yaml", []byte(c.src))
			if c.prefix == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %s… %s", c.prefix, c.says)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.prefix) || !strings.Contains(msg, c.says) {
				t.Errorf("error\n%s\nwant prefix %q and %q", msg, c.prefix, c.says)
			}
		})
	}
}

func TestAPIKeyEnvRefusalDoesNotEchoTheValue(t *testing.T) {
	for _, secret := range []string{
		"sk-this-is-a-secret-key-value",
		"0123456789abcdef0123456789abcdef", // Azure key shape
		"b9f2c0d4e6a8b0c2d4e6f8a0b2c4d6e8", // and one that is a valid variable name
		"my key",
	} {
		src := base + "  - name: b\n    endpoint: https://b.openai.azure.com\n    tpm: 5\n    auth:\n      api_key_env: \"" + secret + "\"\n"
		_, _, err := parseConfig("k.yaml", []byte(src))
		if err == nil {
			t.Errorf("api_key_env %q accepted", secret)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "k.yaml:11: deployments[1].auth.api_key_env: ") || !strings.Contains(msg, "never in the file") {
			t.Errorf("error %q does not point at api_key_env and say why", msg)
		}
		if strings.Contains(msg, secret) {
			t.Errorf("error %q repeats the value", msg)
		}
	}
}

func TestUnknownFieldDoesNotEchoTheValue(t *testing.T) {
	src := base + "    api_key: sk-do-not-print-me\n"
	_, _, err := parseConfig("u.yaml", []byte(src))
	if err == nil || !strings.HasPrefix(err.Error(), "u.yaml:7:") || !strings.Contains(err.Error(), "api_key") {
		t.Fatalf("error = %v, want u.yaml:7: unknown field api_key", err)
	}
	if strings.Contains(err.Error(), "sk-do-not-print-me") {
		t.Errorf("error %q repeats the value", err)
	}
}

func TestEndpointCredentialsRefusedQuietly(t *testing.T) {
	src := base + "  - name: b\n    endpoint: https://user:hunter2@b.openai.azure.com\n    tpm: 5\n    auth: {entra: true}\n"
	_, _, err := parseConfig("e.yaml", []byte(src))
	if err == nil || !strings.HasPrefix(err.Error(), "e.yaml:8: deployments[1].endpoint: ") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error = %v", err)
	}
}

func TestRedisClusterURLs(t *testing.T) {
	for _, u := range []string{
		"redis://10.0.0.5:7000?addr=10.0.0.6:7001&addr=10.0.0.7:7002",
		"rediss://10.0.0.5:7000/0?addr=10.0.0.6:7001",
		"redis+cluster://10.0.0.5:7000",
		"rediss+cluster://clustercfg.budget.abc123.use1.cache.amazonaws.com:6379",
	} {
		_, ws, err := parseConfig("r.yaml", []byte("redis: "+u+"\n"+base))
		if err != nil || len(ws) != 0 {
			t.Errorf("redis: %s: %v, warnings %v", u, err, ws)
		}
	}
	for _, u := range []string{
		"redis://:hunter2@10.0.0.5:7000?addr=10.0.0.6:7001",
		"rediss+cluster://default:hunter2@clustercfg.budget.abc123.use1.cache.amazonaws.com:6379",
	} {
		_, ws, err := parseConfig("r.yaml", []byte("redis: "+u+"\n"+base))
		if err != nil || len(ws) != 1 || !strings.HasPrefix(ws[0].String(), "r.yaml:1: redis: ") || !strings.Contains(ws[0].String(), "password") {
			t.Errorf("redis: %s: %v, warnings %v; want one about the password", u, err, ws)
		}
	}
	// A password in an addr= entry is refused without being repeated.
	_, _, err := parseConfig("r.yaml", []byte("redis: redis://10.0.0.5:7000?addr=user:hunter2@10.0.0.6:7001\n"+base))
	if err == nil || !strings.HasPrefix(err.Error(), "r.yaml:1: redis: ") || !strings.Contains(err.Error(), "host:port only") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error = %v", err)
	}
}

// redis_env keeps a URL with a password out of the file: the variable
// comes from a secret, read when the store is opened.
func TestRedisEnv(t *testing.T) {
	c, ws, err := parseConfig("r.yaml", []byte("redis_env: HR_TEST_REDIS\n"+base))
	if err != nil || len(ws) != 0 {
		t.Fatalf("%v, warnings %v", err, ws)
	}
	t.Setenv("HR_TEST_REDIS", "")
	if _, err := c.RedisURL(); err == nil || !strings.Contains(err.Error(), "redis_env: $HR_TEST_REDIS is empty or unset") {
		t.Errorf("unset: %v", err)
	}
	if _, err := budget.OpenStore(context.Background(), c); err == nil || !strings.Contains(err.Error(), "$HR_TEST_REDIS is empty") {
		t.Errorf("OpenStore with the variable unset: %v", err)
	}
	t.Setenv("HR_TEST_REDIS", "redis://:hunter2@10.0.0.5:6379/2")
	if u, err := c.RedisURL(); err != nil || u != "redis://:hunter2@10.0.0.5:6379/2" {
		t.Errorf("set: %q, %v", u, err)
	}
	t.Setenv("HR_TEST_REDIS", "http://:hunter2@10.0.0.5:6379/2")
	if _, err := c.RedisURL(); err == nil || !strings.Contains(err.Error(), `redis_env: $HR_TEST_REDIS: scheme "http" is not Redis`) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("not Redis: %v", err)
	}
	for _, c := range []struct{ file, want string }{
		{"redis: redis://r:6379/0\nredis_env: REDIS_URL\n", "r.yaml:2: redis_env: redis and redis_env both name the store"},
		{"redis_env: redis://r:6379/0\n", "r.yaml:1: redis_env: not an environment variable's name"},
	} {
		if _, _, err := parseConfig("r.yaml", []byte(c.file+base)); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "r:6379") {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}

func TestLoopbackHTTPAllowed(t *testing.T) {
	for _, ep := range []string{"http://127.0.0.1:8089", "http://[::1]:8089", "http://localhost:8089", "HTTP://LOCALHOST"} {
		cfg := budget.Config{Deployments: []budget.Deployment{{Name: "d", Endpoint: ep, TPM: 1000, Auth: budget.Auth{Entra: true}}}}
		if _, err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", ep, err)
		}
	}
}

func TestSharedStandardQuota(t *testing.T) {
	dep := func(name, typ, model string, tpm int) string {
		return "  - name: " + name + "\n" +
			"    endpoint: https://" + name + ".openai.azure.com\n" +
			"    model: " + model + "\n" +
			"    subscription: sub-1\n" +
			"    region: eastus\n" +
			"    type: " + typ + "\n" +
			"    tpm: " + strconv.Itoa(tpm) + "\n" +
			"    auth: {entra: true}\n" +
			"    pool: " + name + "\n"
	}
	src := "deployments:\n" +
		dep("a", "standard", "gpt-4o", 30000) + // line 2
		dep("b", "standard", "GPT-4o", 60000) + // line 11
		dep("c", "global-standard", "gpt-4o", 90000) +
		dep("d", "standard", "gpt-4o-mini", 20000) +
		dep("e", "standard", "gpt-4o", 10000)
	c, ws, err := parseConfig("q.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 {
		t.Fatalf("warnings %v, want one", ws)
	}
	w := ws[0].String()
	if !strings.HasPrefix(w, "q.yaml:11: deployments[1]: ") {
		t.Errorf("warning %q does not point at the second deployment", w)
	}
	for _, s := range []string{`"a"`, `"b"`, `"e"`, "60000 TPM", "quota:sub-1/eastus/gpt-4o"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q does not mention %s", w, s)
		}
	}
	shared := []int{0, 1, 4}
	for _, i := range shared {
		d := c.Deployments[i]
		if d.QuotaKey != "quota:sub-1/eastus/gpt-4o" || d.QuotaTPM != 60000 || d.QuotaRPM != 360 {
			t.Errorf("%s: quota %s %d/%d, want quota:sub-1/eastus/gpt-4o 60000/360", d.Name, d.QuotaKey, d.QuotaTPM, d.QuotaRPM)
		}
		if l := d.Limits(0.85); l != (budget.Limits{Tokens: 60000, Requests: 360, Margin: 0.85}) {
			t.Errorf("%s: Limits = %+v", d.Name, l)
		}
	}
	if d := c.Deployments[0]; d.TPM != 30000 || d.RPM != 180 {
		t.Errorf("a's own limits changed: %d/%d", d.TPM, d.RPM)
	}
	for _, i := range []int{2, 3} {
		d := c.Deployments[i]
		if d.QuotaKey != d.Name || d.QuotaTPM != d.TPM || d.QuotaRPM != d.RPM {
			t.Errorf("%s shares a quota: %s %d/%d", d.Name, d.QuotaKey, d.QuotaTPM, d.QuotaRPM)
		}
	}
}

func TestValidateInCode(t *testing.T) {
	cfg := budget.Config{Deployments: []budget.Deployment{
		{Name: "a", Endpoint: "https://a.openai.azure.com", Model: "gpt-4o", TPM: 1000, Auth: budget.Auth{Entra: true}},
		{Name: "b", Endpoint: "https://b.openai.azure.com", Model: "gpt-4o", Auth: budget.Auth{Entra: true}},
	}}
	_, err := cfg.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "deployments[1].tpm: missing limits") {
		t.Errorf("Validate = %v, want deployments[1].tpm: missing limits…", err)
	}

	cfg = budget.Config{Deployments: []budget.Deployment{
		{Name: "a", Endpoint: "https://a.openai.azure.com", Subscription: "s", Region: "r", TPM: 1000, Auth: budget.Auth{Entra: true}},
		{Name: "b", Endpoint: "https://b.openai.azure.com", Subscription: "s", Region: "r", TPM: 2000, Auth: budget.Auth{APIKeyEnv: "B_KEY"}},
	}}
	ws, err := cfg.Validate()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || !strings.HasPrefix(ws[0].String(), "deployments[1]: ") {
		t.Errorf("warnings = %v", ws)
	}
	if cfg.Margin != budget.DefaultMargin || cfg.Window != budget.DefaultWindow || cfg.Refund != budget.Hold {
		t.Errorf("defaults not filled: %+v", cfg)
	}
}

func TestResource(t *testing.T) {
	for in, want := range map[string]string{
		"https://Contoso.OpenAI.Azure.com/":     "https://contoso.openai.azure.com",
		"HTTPS://contoso.openai.azure.com:443":  "https://contoso.openai.azure.com",
		"http://127.0.0.1:8089/res-a/":          "http://127.0.0.1:8089/res-a",
		"https://contoso.openai.azure.com:8443": "https://contoso.openai.azure.com:8443",
	} {
		if got := (budget.Deployment{Endpoint: in}).Resource(); got != want {
			t.Errorf("Resource(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "headroom.yaml")
	if err := os.WriteFile(file, []byte(fullConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := loadConfig(file)
	if err != nil || len(c.Deployments) != 3 {
		t.Fatalf("LoadConfig = %v, %v", c, err)
	}
	if _, _, err := loadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// The YAML library panics on a tag on a list; that must be an error.
func TestParseConfigDecoderPanicIsAnError(t *testing.T) {
	_, _, err := parseConfig("t.yaml", []byte("deployments: !00000 00"))
	if err == nil || !strings.HasPrefix(err.Error(), "t.yaml: ") {
		t.Errorf("error = %v, want one naming t.yaml", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("deployments: !00000 00"))
	f.Add([]byte(fullConfig))
	f.Add([]byte(base))
	f.Add([]byte("window: 1ms\n" + base))
	f.Add([]byte("deployments:\n  - {name: a, endpoint: 'http://[::1]/', tpm: 9223372036854775807, weight: .inf, auth: {api_key_env: K}}\n"))
	f.Add([]byte("deployments: [{name: a, endpoint: 'https://a', tpm: 1, auth: {entra: true}, subscription: s, region: r}, {name: b, endpoint: 'https://b', tpm: 2, auth: {entra: true}, subscription: s, region: r}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ws, err := parseConfig("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		for _, w := range ws {
			if !strings.HasPrefix(w.String(), "fuzz.yaml") {
				t.Fatalf("warning %q does not start with the file name", w)
			}
		}
		if _, err := c.Validate(); err != nil {
			t.Fatalf("a parsed config fails Validate: %v", err)
		}
		for _, d := range c.Deployments {
			if d.QuotaKey == "" || d.QuotaTPM < d.TPM || d.QuotaRPM < d.RPM || d.RPM <= 0 || d.Weight <= 0 {
				t.Fatalf("deployment not filled in: %+v", d)
			}
			_ = d.Resource()
		}
		_ = c.Pools()
	})
}

func TestSampleConfigParses(t *testing.T) {
	cfg, warnings, err := loadConfig("../testdata/configs/headroom.yaml")
	if err != nil || len(warnings) != 0 || len(cfg.Deployments) != 3 || cfg.Deployments[0].QuotaRPM != 1440 {
		t.Fatalf("the sample config: %v, %v, %+v", err, warnings, cfg)
	}
}
