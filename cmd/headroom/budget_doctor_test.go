package main

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/llm/azuresim"
)

// doctorSim serves deps on a loopback port, accepting only keys when
// given, until the test ends.
func doctorSim(t *testing.T, keys []string, deps ...azuresim.Deployment) (*azuresim.Sim, string) {
	t.Helper()
	sim, err := azuresim.New(azuresim.Config{Deployments: deps}, azuresim.Options{APIKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return sim, run.URL
}

func TestBudgetDoctorExitCodes(t *testing.T) {
	t.Setenv("DOCTOR_KEY", "doctor-key-0123")
	_, url := doctorSim(t, nil, azuresim.Deployment{Name: "global", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 450_000})
	dir := t.TempDir()
	line := func(name, extra string) string {
		return fmt.Sprintf("  - {name: %s, endpoint: %q, model: gpt-4o, auth: {api_key_env: DOCTOR_KEY}, %s}\n", name, "https://"+name+".openai.azure.com", extra)
	}
	clean := writeFile(t, dir, "clean.yaml", fmt.Sprintf("deployments:\n  - {name: global, endpoint: %q, model: gpt-4o, model_version: \"2024-11-20\", type: global-standard, tpm: 450000, auth: {api_key_env: DOCTOR_KEY}}\n", url))
	infos := writeFile(t, dir, "infos.yaml", "deployments:\n"+
		line("east", `model_version: "2024-11-20", region: eastus, tpm: 240000`)+
		line("sweden", `model_version: "2024-11-20", region: swedencentral, tpm: 240000`))
	shared := writeFile(t, dir, "shared.yaml", "deployments:\n"+
		line("east-a", `model_version: "2024-11-20", subscription: sub-a, region: eastus, tpm: 240000`)+
		line("east-b", `model_version: "2024-11-20", subscription: sub-a, region: eastus, tpm: 240000`))
	mixed := writeFile(t, dir, "mixed.yaml", "deployments:\n"+
		line("a", `model_version: "2024-11-20", tpm: 60000`)+
		line("b", `model_version: "2024-08-06", tpm: 60000`))
	badType := writeFile(t, dir, "badtype.yaml", "deployments:\n"+line("a", "tpm: 60000")+"calltypes:\n  yes-no: {max_tokens: 999999}\n")

	for _, c := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"--config", clean}, exitOK, "clean.yaml: 1 deployment, no findings"},
		{[]string{"--config", clean, "--probe"}, exitOK, "gpt-4o-2024-11-20  450,000"},
		{[]string{"--config", infos}, exitOK, "2 deployments, 1 info, nothing to fix (infos do not fail the check)"},
		{[]string{"--config", shared}, exitFailed, "warning  shared-quota: east-a, east-b"},
		{[]string{"--config", mixed}, exitUsage, filepath.Base(mixed) + ":3: deployments[1].model_version: pool \"default\" mixes model versions"},
		{[]string{"--config", badType}, exitUsage, "calltypes.yes-no"},
		{[]string{"--config", filepath.Join(dir, "none.yaml")}, exitUsage, "none.yaml"},
		{nil, exitUsage, "no config to check"},
		{[]string{"--config", clean, "stray"}, exitUsage, `unexpected argument "stray"`},
		{[]string{"-h"}, exitOK, "-probe"},
	} {
		t.Setenv("HEADROOM_CONFIG", "")
		code, out, errs := runArgs(t, append([]string{"budget", "doctor"}, c.args...)...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("headroom budget doctor %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errs)
		}
	}

	// $HEADROOM_CONFIG names the file when no flag does.
	t.Setenv("HEADROOM_CONFIG", shared)
	if code, _, _ := runArgs(t, "budget", "doctor"); code != exitFailed {
		t.Errorf("with $HEADROOM_CONFIG: exit %d", code)
	}
}

func TestBudgetDoctorProbeJSON(t *testing.T) {
	t.Setenv("DOCTOR_KEY", "doctor-key-0123")
	sim, url := doctorSim(t, nil,
		azuresim.Deployment{Name: "a", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000},
		azuresim.Deployment{Name: "b", Model: "gpt-4o", ModelVersion: "2024-08-06", TPM: 120_000},
	)
	if err := sim.Adjust("default", "a", 0.5, time.Minute); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "headroom.yaml", fmt.Sprintf(`deployments:
  - {name: a, endpoint: %[1]q, model: gpt-4o, model_version: "2024-11-20", tpm: 120000, auth: {api_key_env: DOCTOR_KEY}}
  - {name: b, endpoint: %[1]q, model: gpt-4o, model_version: "2024-11-20", tpm: 120000, auth: {api_key_env: DOCTOR_KEY}}
`, url))
	code, out, errs := runArgs(t, "budget", "doctor", "--config", cfg, "--probe", "--json")
	if code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Findings []struct {
			Severity, Check, Message, Fix string
			Deployments                   []string
		} `json:"findings"`
		Probed []struct {
			Deployment  string `json:"deployment"`
			Status      int    `json:"status"`
			Model       string `json:"model"`
			LimitTokens int64  `json:"limit_tokens"`
		} `json:"probed"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, f := range r.Findings {
		if f.Fix == "" || f.Message == "" || len(f.Deployments) == 0 {
			t.Errorf("finding without its parts: %+v", f)
		}
		got[f.Check+" "+strings.Join(f.Deployments, ",")] = f.Severity
	}
	if got["probe-limit a"] != "warning" || got["probe-version b"] != "error" {
		t.Errorf("findings %v", got)
	}
	if len(r.Probed) != 2 || r.Probed[0].LimitTokens != 60_000 || r.Probed[1].Model != "gpt-4o-2024-08-06" || r.Probed[1].Status != 200 {
		t.Errorf("probed %+v", r.Probed)
	}
}

// The keys a probe sends never reach stdout or stderr: not on success, not
// on a 401, not when nothing answers.
func TestBudgetDoctorProbeKeepsKeysOut(t *testing.T) {
	const canary = "doctor-canary-5e4d3c2b1a0f9e8d7c6b"
	t.Setenv("DOCTOR_CANARY", canary)
	t.Setenv("DOCTOR_WRONG", canary+"-not-this-one")
	_, url := doctorSim(t, []string{canary}, azuresim.Deployment{Name: "d", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60_000})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	cfg := writeFile(t, t.TempDir(), "headroom.yaml", fmt.Sprintf(`deployments:
  - {name: ok, deployment: d, endpoint: %[1]q, model: gpt-4o, model_version: "2024-11-20", tpm: 60000, auth: {api_key_env: DOCTOR_CANARY}}
  - {name: wrong, deployment: d, endpoint: %[1]q, model: gpt-4o, model_version: "2024-11-20", pool: w, tpm: 60000, auth: {api_key_env: DOCTOR_WRONG}}
  - {name: gone, endpoint: %[2]q, model: gpt-4o, model_version: "2024-11-20", pool: g, tpm: 60000, auth: {api_key_env: DOCTOR_CANARY}}
`, url, gone))
	for _, args := range [][]string{{"--probe"}, {"--probe", "--json"}} {
		code, out, errs := runArgs(t, append([]string{"budget", "doctor", "--config", cfg}, args...)...)
		if code != exitFailed || !strings.Contains(out, "refused the key in $DOCTOR_WRONG") || !strings.Contains(out, "could not be probed") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
		if strings.Contains(out+errs, canary) {
			t.Errorf("%v: the key is in the output:\n%s\n%s", args, out, errs)
		}
	}
}
