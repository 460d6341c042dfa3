package doctor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/doctor"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// check loads yaml as config.Load would and runs the doctor on it.
func check(t *testing.T, yaml string, o doctor.Options) doctor.Report {
	t.Helper()
	f, ws, err := config.Parse("headroom.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	o.Warnings = ws
	return doctor.Check(context.Background(), f, o)
}

// of is the report's findings of one check.
func of(r doctor.Report, check string) []doctor.Finding {
	var out []doctor.Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// one is the only finding of a check, failing the test unless there is
// exactly one with that severity.
func one(t *testing.T, r doctor.Report, check string, sev doctor.Severity) doctor.Finding {
	t.Helper()
	fs := of(r, check)
	if len(fs) != 1 || fs[0].Severity != sev {
		t.Fatalf("%s: want one %s, got %+v", check, sev, fs)
	}
	return fs[0]
}

func none(t *testing.T, r doctor.Report, check string) {
	t.Helper()
	if fs := of(r, check); len(fs) > 0 {
		t.Errorf("%s: want no finding, got %+v", check, fs)
	}
}

func mentions(t *testing.T, f doctor.Finding, figures ...string) {
	t.Helper()
	for _, s := range figures {
		if !strings.Contains(f.Message+" fix: "+f.Fix, s) {
			t.Errorf("%s finding does not say %q:\n%s\nfix: %s", f.Check, s, f.Message, f.Fix)
		}
	}
}

// dep writes one deployment line; extra is more flow-mapping fields.
func dep(name, extra string) string {
	return fmt.Sprintf("  - {name: %s, endpoint: \"https://%s.openai.azure.com\", model: gpt-4o, model_version: \"2024-11-20\", auth: {api_key_env: K}, %s}\n", name, name, extra)
}

func TestDoctorSharedQuota(t *testing.T) {
	r := check(t, "deployments:\n"+
		dep("east-a", "subscription: sub-a, region: eastus, tpm: 240000")+
		dep("east-b", "subscription: sub-a, region: eastus, tpm: 240000")+
		dep("east-c", "subscription: sub-a, region: eastus, tpm: 120000")+
		dep("west", "subscription: sub-a, region: westus, tpm: 120000"), doctor.Options{})
	f := one(t, r, doctor.CheckSharedQuota, doctor.Warning)
	if strings.Join(f.Deployments, ",") != "east-a,east-b,east-c" {
		t.Errorf("deployments %v", f.Deployments)
	}
	mentions(t, f, "240,000 TPM", "1,440 RPM", "600,000 TPM", "sub-a", "eastus", "another region or subscription")
	none(t, r, doctor.CheckConfig) // config.Load's warning of the same is folded in
	if !r.Failed() {
		t.Error("a shared quota does not fail the check")
	}

	// A fallback on the primary's quota is rate-limited with it.
	r = check(t, "deployments:\n"+
		dep("east-a", "subscription: sub-a, region: eastus, tpm: 240000")+
		dep("east-b", "subscription: sub-a, region: eastus, tpm: 240000, pool: spare")+
		"fallback: {pool: spare}\n", doctor.Options{})
	mentions(t, one(t, r, doctor.CheckSharedQuota, doctor.Warning), `pools "default" and "spare"`, "takes nothing off the primary")

	// Other regions, other subscriptions, other types: quotas of their own.
	r = check(t, "deployments:\n"+
		dep("a", "subscription: sub-a, region: eastus, tpm: 240000")+
		dep("b", "subscription: sub-b, region: eastus, tpm: 240000")+
		dep("c", "subscription: sub-a, region: eastus, type: data-zone, tpm: 240000"), doctor.Options{})
	none(t, r, doctor.CheckSharedQuota)
}

func TestDoctorPoolVersions(t *testing.T) {
	unpinned := "  - {name: b, endpoint: \"https://b.openai.azure.com\", model: gpt-4o, tpm: 60000, auth: {api_key_env: K}}\n" +
		"  - {name: c, endpoint: \"https://c.openai.azure.com\", model: gpt-4o, tpm: 60000, auth: {api_key_env: K}}\n"
	r := check(t, "deployments:\n"+unpinned, doctor.Options{})
	f := one(t, r, doctor.CheckPoolVersion, doctor.Warning)
	if strings.Join(f.Deployments, ",") != "b,c" {
		t.Errorf("deployments %v", f.Deployments)
	}
	mentions(t, f, `pool "default"`, "gpt-4o", "set model_version")

	// Pinned, or alone in its pool: nothing to mix.
	none(t, check(t, "deployments:\n"+dep("a", "tpm: 60000")+dep("b", "tpm: 60000"), doctor.Options{}), doctor.CheckPoolVersion)
	none(t, check(t, "deployments:\n"+dep("a", "tpm: 60000")+strings.Replace(unpinned[:strings.Index(unpinned, "\n")+1], "tpm: 60000", "tpm: 60000, pool: small", 1), doctor.Options{}), doctor.CheckPoolVersion)
}

func TestDoctorRPMRatio(t *testing.T) {
	r := check(t, "deployments:\n"+
		dep("over", "region: r1, tpm: 60000, rpm: 1000")+
		dep("under", "region: r2, tpm: 60000, rpm: 100")+
		dep("exact", "region: r3, tpm: 60000, rpm: 360")+
		"  - {name: o3mini, endpoint: \"https://o.openai.azure.com\", model: o3-mini, pool: o3, tpm: 100000, rpm: 10, auth: {api_key_env: K}}\n"+
		"  - {name: o1, endpoint: \"https://o1.openai.azure.com\", model: o1, pool: o1, tpm: 60000, rpm: 60, auth: {api_key_env: K}}\n"+
		"  - {name: gpt5, endpoint: \"https://g5.openai.azure.com\", model: gpt-5, pool: g5, tpm: 100000, rpm: 5, auth: {api_key_env: K}}\n",
		doctor.Options{})
	got := map[string]doctor.Finding{}
	for _, f := range of(r, doctor.CheckRPMRatio) {
		got[f.Deployments[0]] = f
	}
	if len(got) != 3 {
		t.Errorf("rpm-ratio findings for %v, want over, under and o1", got)
	}
	if f := got["over"]; f.Severity != doctor.Warning {
		t.Errorf("over: %+v", f)
	} else {
		mentions(t, f, "rpm 1,000", "6 RPM per 1,000 TPM", "60,000 TPM carries 360 RPM", "166 per 10 s", "allows 60 per 10 s", "166,667")
	}
	if f := got["under"]; f.Severity != doctor.Info {
		t.Errorf("under: %+v", f)
	} else {
		mentions(t, f, "rpm 100", "360 RPM", "260 requests a minute unused")
	}
	if f := got["o1"]; f.Severity != doctor.Warning {
		t.Errorf("o1: %+v", f)
	} else {
		mentions(t, f, "1 RPM per 6,000 TPM", "carries 10 RPM")
	}
}

func TestDoctorGlobalStandard(t *testing.T) {
	two := "deployments:\n" + dep("east", "region: eastus, tpm: 240000") + dep("sweden", "region: swedencentral, type: data-zone, tpm: 120000")
	f := one(t, check(t, two, doctor.Options{}), doctor.CheckGlobalStandard, doctor.Info)
	mentions(t, f, "1 Standard and 1 Data Zone deployments", "360,000 TPM", "quota of its own", "data residency", "type: global-standard")

	none(t, check(t, two+dep("global", "type: global-standard, tpm: 450000"), doctor.Options{}), doctor.CheckGlobalStandard)
	none(t, check(t, "deployments:\n"+dep("east", "tpm: 240000"), doctor.Options{}), doctor.CheckGlobalStandard)
	r := check(t, two, doctor.Options{})
	if r.Failed() {
		t.Errorf("an info fails the check: %+v", r.Findings)
	}
}

func TestDoctorFallbackCapacity(t *testing.T) {
	primary := "deployments:\n" + dep("east", "region: eastus, tpm: 240000") + dep("sweden", "region: swedencentral, tpm: 240000")
	small := func(tpm int) string {
		return fmt.Sprintf("  - {name: mini, endpoint: \"https://mini.openai.azure.com\", model: gpt-4o-mini, pool: small, tpm: %d, auth: {api_key_env: K}}\n", tpm)
	}

	// Smaller than the largest primary quota: one region out at full load
	// sheds calls.
	f := one(t, check(t, primary+small(60000)+"fallback: {pool: small}\n", doctor.Options{}), doctor.CheckFallback, doctor.Warning)
	mentions(t, f, `"small" has 60,000 TPM and 360 RPM`, "480,000 TPM and 2,880 RPM", "about 13%", "largest quota", "at least 240,000 TPM")

	// Enough for one quota, not for the whole pool.
	f = one(t, check(t, primary+small(300000)+"fallback: {pool: small}\n", doctor.Options{}), doctor.CheckFallback, doctor.Info)
	mentions(t, f, "about 63%", "480,000 TPM and 2,880 RPM")

	// As large as the primary: nothing to say.
	none(t, check(t, primary+small(480000)+"fallback: {pool: small}\n", doctor.Options{}), doctor.CheckFallback)

	// Its warm share alone is more than it has while the primary runs full.
	f = one(t, check(t, primary+small(200000)+"fallback: {pool: small, share: 0.5}\n", doctor.Options{}), doctor.CheckFallback, doctor.Warning)
	mentions(t, f, "warm share, 50% of calls", "240,000 TPM", "lower fallback.share to 0.42")

	// A reasoning fallback for a chat primary spends more per call.
	f = one(t, check(t, primary+"  - {name: o4, endpoint: \"https://o4.openai.azure.com\", model: o4-mini, pool: small, tpm: 100000, auth: {api_key_env: K}}\nfallback: {pool: small}\n", doctor.Options{}),
		doctor.CheckFallback, doctor.Warning)
	mentions(t, f, "100 RPM", "about 3.5%", "reasoning allowance")

	// A type's own fallback carries that type's calls only: an info.
	f = one(t, check(t, primary+small(60000)+"calltypes:\n  yes-no: {fallback: small}\n", doctor.Options{}), doctor.CheckFallback, doctor.Info)
	mentions(t, f, `the fallback of "yes-no"`, "about 13%")
}

// probeWith is the binary's probe: llm.Probe, keys from getenv.
func probeWith(getenv func(string) string) doctor.Probe {
	return func(ctx context.Context, d budget.Deployment) (doctor.Answer, error) {
		r, err := llm.Probe(ctx, d, llm.ProbeOptions{Getenv: getenv})
		return doctor.Answer{Status: r.Status, Header: r.Header, Model: r.Model, Code: r.Code, Message: r.Message, Latency: r.Latency}, err
	}
}

var anyKey = func(string) string { return "doctor-test-key" }

// serve runs a simulator of deps on a loopback port until the test ends.
func serve(t *testing.T, o azuresim.Options, deps ...azuresim.Deployment) (*azuresim.Sim, string) {
	t.Helper()
	sim, err := azuresim.New(azuresim.Config{Deployments: deps}, o)
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

// simDep writes a deployment of the simulator at url.
func simDep(name, url, extra string) string {
	return fmt.Sprintf("  - {name: %s, endpoint: %q, model: gpt-4o, auth: {api_key_env: K}, %s}\n", name, url, extra)
}

func TestDoctorCleanConfig(t *testing.T) {
	_, url := serve(t, azuresim.Options{}, azuresim.Deployment{Name: "global", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 450_000})
	yaml := "deployments:\n" + simDep("global", url, `model_version: "2024-11-20", type: global-standard, tpm: 450000`)
	for _, probe := range []doctor.Probe{nil, probeWith(anyKey)} {
		r := check(t, yaml, doctor.Options{Probe: probe})
		if len(r.Findings) != 0 || r.Failed() {
			t.Errorf("a clean config: %+v", r.Findings)
		}
		if probe != nil && (len(r.Probed) != 1 || r.Probed[0].Status != 200 || r.Probed[0].LimitTokens != 450_000 || r.Probed[0].Model != "gpt-4o-2024-11-20") {
			t.Errorf("probed %+v", r.Probed)
		}
	}
}

func TestDoctorProbeAdjustment(t *testing.T) {
	sim, url := serve(t, azuresim.Options{},
		azuresim.Deployment{Name: "now", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60_000},
		azuresim.Deployment{Name: "scheduled", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000,
			Adjustments: []azuresim.Adjustment{{At: 0, For: time.Minute, Factor: 0.25}}},
		azuresim.Deployment{Name: "bigger", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 90_000},
	)
	if err := sim.Adjust("default", "now", 0.5, time.Minute); err != nil {
		t.Fatal(err)
	}
	r := check(t, "deployments:\n"+
		simDep("now", url, `model_version: "2024-11-20", tpm: 60000`)+
		simDep("scheduled", url, `model_version: "2024-11-20", tpm: 120000`)+
		simDep("bigger", url, `model_version: "2024-11-20", tpm: 60000`),
		doctor.Options{Probe: probeWith(anyKey)})
	got := map[string]doctor.Finding{}
	for _, f := range of(r, doctor.CheckProbeLimit) {
		got[f.Deployments[0]] = f
	}
	if f := got["now"]; f.Severity != doctor.Warning {
		t.Errorf("now: %+v", f)
	} else {
		mentions(t, f, "x-ratelimit-limit-tokens 30,000", "configured tpm 60,000", "50% of it", "temporary adjustment")
	}
	if f := got["scheduled"]; f.Severity != doctor.Warning {
		t.Errorf("scheduled: %+v", f)
	} else {
		mentions(t, f, "30,000", "120,000", "25% of it")
	}
	// The simulator's 90,000 TPM deployment configured at 60,000: quota
	// left unused, and its 540 RPM (90 per 10 s) is not what rpm says.
	var bigger []doctor.Finding
	for _, f := range of(r, doctor.CheckProbeLimit) {
		if f.Deployments[0] == "bigger" {
			bigger = append(bigger, f)
		}
	}
	if len(bigger) != 2 || bigger[0].Severity != doctor.Info || !strings.Contains(bigger[0].Message, "30,000 TPM of its quota unused") ||
		!strings.Contains(bigger[1].Message, "x-ratelimit-limit-requests 90") {
		t.Errorf("bigger: %+v", bigger)
	}
	if !r.Failed() {
		t.Error("an adjustment does not fail the check")
	}
}

func TestDoctorProbeVersionMismatch(t *testing.T) {
	_, url := serve(t, azuresim.Options{},
		azuresim.Deployment{Name: "a", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 60_000},
		azuresim.Deployment{Name: "b", Model: "gpt-4o", ModelVersion: "2024-08-06", TPM: 60_000},
		azuresim.Deployment{Name: "mini", Model: "gpt-4o-mini", ModelVersion: "2024-07-18", TPM: 60_000},
	)
	// Pinned in the config: the member Azure serves otherwise is named.
	r := check(t, "deployments:\n"+
		simDep("a", url, `model_version: "2024-11-20", tpm: 60000`)+
		simDep("b", url, `model_version: "2024-11-20", tpm: 60000`), doctor.Options{Probe: probeWith(anyKey)})
	f := one(t, r, doctor.CheckProbeVersion, doctor.Error)
	if strings.Join(f.Deployments, ",") != "b" {
		t.Errorf("deployments %v", f.Deployments)
	}
	mentions(t, f, "serves version 2024-08-06", `"gpt-4o-2024-08-06"`, "gpt-4o version 2024-11-20", "turn off automatic version upgrades")

	// Not pinned: each says what it serves, and the pool is drift.
	r = check(t, "deployments:\n"+simDep("a", url, "tpm: 60000")+simDep("b", url, "tpm: 60000"), doctor.Options{Probe: probeWith(anyKey)})
	var drift *doctor.Finding
	infos := 0
	for _, f := range of(r, doctor.CheckProbeVersion) {
		switch f.Severity {
		case doctor.Error:
			drift = &f
		case doctor.Info:
			infos++
		}
	}
	if drift == nil || infos != 2 {
		t.Fatalf("unpinned versions: %+v", of(r, doctor.CheckProbeVersion))
	}
	mentions(t, *drift, `pool "default" serves more than one version of gpt-4o`, "a at 2024-11-20; b at 2024-08-06")

	// Another model behind the name.
	r = check(t, "deployments:\n"+simDep("mini", url, "tpm: 60000"), doctor.Options{Probe: probeWith(anyKey)})
	mentions(t, one(t, r, doctor.CheckProbeVersion, doctor.Error), `answers as model "gpt-4o-mini-2024-07-18"`, "runs another model")
}

func TestDoctorProbeUnreachable(t *testing.T) {
	const canary = "doctor-canary-0d9e8f7a6b5c4d3e2f1a"
	_, url := serve(t, azuresim.Options{APIKeys: []string{"the-right-key"}}, azuresim.Deployment{Name: "d", Model: "gpt-4o", TPM: 60_000})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	r := check(t, "deployments:\n"+
		simDep("wrong-key", url, "deployment: d, tpm: 60000")+
		fmt.Sprintf("  - {name: no-such, endpoint: %q, model: gpt-4o, tpm: 60000, auth: {api_key_env: RIGHT}}\n", url)+
		simDep("gone", gone, "tpm: 60000"), doctor.Options{Probe: probeWith(func(env string) string {
		if env == "RIGHT" {
			return "the-right-key"
		}
		return canary
	})})
	got := map[string]doctor.Finding{}
	for _, f := range of(r, doctor.CheckProbe) {
		if f.Severity != doctor.Error {
			t.Errorf("%+v is not an error", f)
		}
		got[f.Deployments[0]] = f
	}
	mentions(t, got["wrong-key"], "refused the key in $K", "HTTP 401")
	mentions(t, got["no-such"], `deployment "no-such"`, "HTTP 404", "DeploymentNotFound")
	mentions(t, got["gone"], "could not be probed", "connection refused")
	if len(r.Probed) != 3 || r.Probed[2].Status != 0 || r.Probed[2].Error == "" {
		t.Errorf("probed %+v", r.Probed)
	}

	var out bytes.Buffer
	if err := json.NewEncoder(&out).Encode(r); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), canary) {
		t.Errorf("the key is in the report:\n%s", out.String())
	}
}

// config.Load's other warnings reach the report, at their line.
func TestDoctorKeepsLoadWarnings(t *testing.T) {
	r := check(t, "redis: redis://:hunter2@127.0.0.1:6379/0\ndeployments:\n"+dep("a", "tpm: 60000"), doctor.Options{})
	mentions(t, one(t, r, doctor.CheckConfig, doctor.Warning), "headroom.yaml:1: redis:", "holds a password")
}

// TestServiceTier: a type's tier (or a class's) on deployments that do
// not offer it is a warning naming them; on a Global Standard deployment
// of a model with the tier, none.
func TestServiceTier(t *testing.T) {
	std := "deployments:\n" + dep("east", "tpm: 240000") + "calltypes:\n  summarize: {service_tier: flex}\n"
	f := one(t, check(t, std, doctor.Options{}), doctor.CheckServiceTier, doctor.Warning)
	mentions(t, f, "summarize", "flex", "east")
	class := "deployments:\n" + dep("east", "tpm: 240000") + "service_tiers: {background: priority}\n"
	f = one(t, check(t, class, doctor.Options{}), doctor.CheckServiceTier, doctor.Warning)
	mentions(t, f, "background", "priority", "gpt-4o")
	ok := "deployments:\n  - {name: g, endpoint: \"https://g.openai.azure.com\", model: o4-mini, model_version: \"2025-04-16\", type: global-standard, tpm: 100000, auth: {api_key_env: K}}\ncalltypes:\n  summarize: {service_tier: flex}\n"
	none(t, check(t, ok, doctor.Options{}), doctor.CheckServiceTier)
}
