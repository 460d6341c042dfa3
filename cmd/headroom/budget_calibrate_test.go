package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget/calibrate"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

const calibrateKey = "calibrate-key-7f3a9c"

// calibrateSim serves cfg's deployments on a loopback port, taking only
// calibrateKey, until the test ends.
// calibrateWindow is the tests' compressed token window: long enough that
// a round of calls fits in it on a machine loaded enough to take most of
// a second a call.
const calibrateWindow = 20 * time.Second

func calibrateSim(t *testing.T, cfg azuresim.Config) string {
	t.Helper()
	sim, err := azuresim.New(cfg, azuresim.Options{APIKeys: []string{calibrateKey}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run.URL
}

// calibrateConfig is a headroom config with one line per deployment
// name, each at url, with the window compressed as the simulator's is.
func calibrateConfig(t *testing.T, window, url string, names ...string) string {
	t.Helper()
	body := "window: " + window + "\ndeployments:\n"
	for _, n := range names {
		body += fmt.Sprintf("  - {name: %s, endpoint: %q, model: gpt-4o, model_version: \"2024-11-20\", tpm: 120000, auth: {api_key_env: CALIBRATE_KEY}}\n", n, url)
	}
	return writeFile(t, t.TempDir(), "headroom.yaml", body)
}

type calibrated struct {
	Deployment     string  `json:"deployment"`
	Released       bool    `json:"released"`
	Recommendation string  `json:"recommendation"`
	EstimateRatio  float64 `json:"estimate_ratio"`
	LagP99         float64 `json:"dispatch_lag_ms_p99"`
	Evidence       struct {
		Summary string `json:"summary"`
		Calls   int    `json:"calls"`
		Samples []struct {
			Charged, Estimate, Used, Unused, Released int64
		} `json:"samples"`
	} `json:"evidence"`
	Error string `json:"error"`
}

func TestBudgetCalibrateTellsTheSimulatorsRefundModesApart(t *testing.T) {
	t.Setenv("CALIBRATE_KEY", calibrateKey)
	for _, c := range []struct {
		refund   azuresim.RefundPolicy
		released bool
		want     string
	}{
		{azuresim.Hold, false, "hold"},
		{azuresim.Refund, true, "refund"},
	} {
		url := calibrateSim(t, azuresim.Config{Window: calibrateWindow, Refund: c.refund, Deployments: []azuresim.Deployment{
			{Name: "gpt4o", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000},
		}})
		cfg := calibrateConfig(t, calibrateWindow.String(), url, "gpt4o")
		start := time.Now()
		code, out, errs := runArgs(t, "budget", "calibrate", "--config", cfg, "--json")
		// On a loaded machine a call can take so long that the calls no
		// longer fit the compressed window: that run measures nothing, so
		// it is run again.
		for try := 0; try < 3 && code != exitOK && strings.Contains(out, "window allows"); try++ {
			t.Logf("--refund %s: the machine was too slow for the window: again", c.refund)
			code, out, errs = runArgs(t, "budget", "calibrate", "--config", cfg, "--json")
		}
		if code != exitOK {
			t.Fatalf("--refund %s: exit %d\n%s\n%s", c.refund, code, out, errs)
		}
		t.Logf("--refund %s: calibrated in %v", c.refund, time.Since(start).Round(time.Millisecond))
		var rs []calibrated
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("--refund %s: %v\n%s", c.refund, err, out)
		}
		r := rs[0]
		if r.Deployment != "gpt4o" || r.Recommendation != c.want || r.Released != c.released {
			t.Errorf("--refund %s: %+v", c.refund, r)
		}
		// The simulator admits on the same character rule as llm.Estimate.
		if math.Abs(r.EstimateRatio-1) > 0.01 {
			t.Errorf("--refund %s: estimate ratio %v, want 1", c.refund, r.EstimateRatio)
		}
		if r.LagP99 <= 0 || r.LagP99 > 1000 {
			t.Errorf("--refund %s: dispatch lag p99 %v ms", c.refund, r.LagP99)
		}
		// Six or seven for the text, and the image's five.
		if n := r.Evidence.Calls - calibrate.ImageCalls; n < 6 || n > 7 || len(r.Evidence.Samples) != 2 || r.Evidence.Summary == "" {
			t.Errorf("--refund %s: evidence %+v", c.refund, r.Evidence)
		}
		for _, s := range r.Evidence.Samples {
			if s.Estimate != 2009 || s.Charged != 2009 || s.Unused != s.Charged-s.Used || (s.Released == s.Unused) != c.released {
				t.Errorf("--refund %s: sample %+v", c.refund, s)
			}
		}
		t.Logf("--refund %s: ratio %v, lag p99 %v ms, %s", c.refund, r.EstimateRatio, r.LagP99, r.Evidence.Summary)

		code, text, errs2 := runArgs(t, "budget", "calibrate", "--config", cfg)
		if code != exitOK || !strings.Contains(text, "deployment  released  recommendation  estimate ratio") ||
			!strings.Contains(text, "gpt4o       ") || !strings.Contains(text, " "+c.want+" ") {
			t.Errorf("--refund %s: the table, exit %d:\n%s\n%s", c.refund, code, text, errs2)
		}
		if strings.Contains(out+errs+text+errs2, calibrateKey) {
			t.Errorf("--refund %s: the key reached the output", c.refund)
		}
	}
}

// A server whose admission charge differs from the character rule shows
// as the estimate ratio; one that counts a call some time after it arrives,
// as the dispatch lag; a sliding token window, idle, reads as a fixed one.
func TestBudgetCalibrateMeasuresTheServersRules(t *testing.T) {
	t.Setenv("CALIBRATE_KEY", calibrateKey)
	for _, c := range []struct {
		name  string
		d     azuresim.Deployment
		ratio float64
		lag   time.Duration // at least
	}{
		{"estimate_scale 1.1", azuresim.Deployment{EstimateScale: 1.1}, 1.1, 0},
		{"estimate_scale 0.9", azuresim.Deployment{EstimateScale: 0.9}, 0.9, 0},
		{"estimate_scale 1.1, noise 5%", azuresim.Deployment{EstimateScale: 1.1, EstimateNoise: 0.05}, 1.1, 0},
		{"dispatch_delay 30ms", azuresim.Deployment{DispatchDelay: 30 * time.Millisecond}, 1, 30 * time.Millisecond},
		{"sliding token window", azuresim.Deployment{TokenWindow: azuresim.SlidingWindow, RequestWindows: azuresim.SlidingWindow}, 1, 0},
	} {
		for _, refund := range []azuresim.RefundPolicy{azuresim.Hold, azuresim.Refund} {
			d := c.d
			d.Name, d.Model, d.ModelVersion, d.TPM = "gpt4o", "gpt-4o", "2024-11-20", 120_000
			url := calibrateSim(t, azuresim.Config{Window: calibrateWindow, Refund: refund, Seed: 7, Deployments: []azuresim.Deployment{d}})
			code, out, errs := runArgs(t, "budget", "calibrate", "--config", calibrateConfig(t, calibrateWindow.String(), url, "gpt4o"), "--json")
			var rs []calibrated
			if err := json.Unmarshal([]byte(out), &rs); code != exitOK || err != nil || len(rs) != 1 {
				t.Errorf("%s, --refund %s: exit %d, %v\n%s\n%s", c.name, refund, code, err, out, errs)
				continue
			}
			r := rs[0]
			tol := 0.02
			if d.EstimateNoise > 0 {
				tol = d.EstimateNoise // two samples, each within ± the noise
			}
			if want := string(refund); r.Recommendation != want {
				t.Errorf("%s, --refund %s: recommendation %q", c.name, refund, r.Recommendation)
			}
			if math.Abs(r.EstimateRatio-c.ratio) > tol*c.ratio {
				t.Errorf("%s, --refund %s: estimate ratio %v, want %v within %.0f%%", c.name, refund, r.EstimateRatio, c.ratio, tol*100)
			}
			lag := time.Duration(r.LagP99 * float64(time.Millisecond))
			if lag < c.lag || lag > c.lag+200*time.Millisecond {
				t.Errorf("%s, --refund %s: dispatch lag p99 %v, want %v or a little more", c.name, refund, lag, c.lag)
			}
			t.Logf("%s, --refund %s: ratio %v, lag p99 %v ms, %d calls", c.name, refund, r.EstimateRatio, r.LagP99, r.Evidence.Calls)
		}
	}
}

func TestBudgetCalibrateExitCodes(t *testing.T) {
	t.Setenv("CALIBRATE_KEY", calibrateKey)
	t.Setenv("HEADROOM_CONFIG", "")
	url := calibrateSim(t, azuresim.Config{Window: calibrateWindow, Deployments: []azuresim.Deployment{
		{Name: "a", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000},
		{Name: "b", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000},
	}})
	two := calibrateConfig(t, calibrateWindow.String(), url, "a", "b")

	// An endpoint that answers chat completions without rate-limit
	// headers, as a gateway that strips them would.
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-2024-11-20","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":1,"total_tokens":15}}`)
	}))
	t.Cleanup(bare.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, c := range []struct {
		args []string
		env  string // CALIBRATE_KEY for this case
		code int
		want string // in stdout or stderr
	}{
		{[]string{"--config", two, "--deployment", "b", "--json"}, calibrateKey, exitOK, `"deployment": "b"`},
		{[]string{"--config", two, "--deployment", "c"}, calibrateKey, exitUsage, `--deployment "c": ` + two + ` has no such deployment (have: a, b)`},
		{[]string{"--config", calibrateConfig(t, calibrateWindow.String(), bare.URL, "bare")}, calibrateKey, exitFailed, "no x-ratelimit-remaining-tokens"},
		{[]string{"--config", calibrateConfig(t, calibrateWindow.String(), closed.URL, "gone"), "--json"}, calibrateKey, exitFailed, `"error": "could not be called: `},
		{[]string{"--config", two, "--deployment", "a"}, "wrong-key-123456", exitFailed, "answered HTTP 401"},
		{[]string{"--config", two, "--deployment", "a"}, "", exitFailed, "CALIBRATE_KEY (auth.api_key_env)"},
		{nil, calibrateKey, exitUsage, "no config: pass --config FILE"},
		{[]string{"--config", two, "stray"}, calibrateKey, exitUsage, `unexpected argument "stray"`},
		{[]string{"--config", two, "--timeout", "0s"}, calibrateKey, exitUsage, "--timeout 0s"},
		{[]string{"--config", writeFile(t, t.TempDir(), "bad.yaml", "deployments:\n  - {name: a}\n")}, calibrateKey, exitUsage, "bad.yaml:2"},
		{[]string{"-h"}, calibrateKey, exitOK, "-deployment"},
	} {
		t.Setenv("CALIBRATE_KEY", c.env)
		code, out, errs := runArgs(t, append([]string{"budget", "calibrate"}, c.args...)...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("headroom budget calibrate %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errs)
		}
		for _, k := range []string{calibrateKey, "wrong-key-123456"} {
			if strings.Contains(out+errs, k) {
				t.Errorf("headroom budget calibrate %v: a key reached the output", c.args)
			}
		}
	}
}

// budget calibrate reads what admission charges an image: the published
// count by default, and a flat 1,200 where the deployment charges that,
// which it recommends as image_admission.
func TestBudgetCalibrateReadsAnImagesAdmissionCharge(t *testing.T) {
	t.Setenv("CALIBRATE_KEY", calibrateKey)
	for _, c := range []struct {
		admission, want, recommend int64
	}{
		{0, 85, 0}, // a 512-px image at detail low on gpt-4o
		{1200, 1200, 1200},
	} {
		d := azuresim.Deployment{Name: "gpt4o", Model: "gpt-4o", ModelVersion: "2024-11-20", TPM: 120_000, ImageAdmission: c.admission}
		url := calibrateSim(t, azuresim.Config{Window: calibrateWindow, Seed: 7, Deployments: []azuresim.Deployment{d}})
		cfg := calibrateConfig(t, calibrateWindow.String(), url, "gpt4o")
		code, out, errs := runArgs(t, "budget", "calibrate", "--config", cfg, "--json")
		var rs []struct {
			Image *struct {
				Charged, Published, Recommendation int64
				Error                              string
			} `json:"image"`
		}
		if err := json.Unmarshal([]byte(out), &rs); code != exitOK || err != nil || len(rs) != 1 || rs[0].Image == nil {
			t.Fatalf("image_admission %d: exit %d, %v\n%s\n%s", c.admission, code, err, out, errs)
		}
		im := rs[0].Image
		if im.Error != "" || im.Charged < c.want-2 || im.Charged > c.want+2 || im.Published != 85 || im.Recommendation != c.recommend && (c.recommend == 0 || im.Recommendation < c.want-2) {
			t.Errorf("image_admission %d: read %+v, want a charge of %d and a recommendation of %d", c.admission, im, c.want, c.recommend)
		}
		if c.recommend > 0 {
			_, text, _ := runArgs(t, "budget", "calibrate", "--config", cfg)
			if !strings.Contains(text, "image_admission: ") {
				t.Errorf("the table does not say to set image_admission:\n%s", text)
			}
		}
	}
}
