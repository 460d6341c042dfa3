package top

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

var at = time.Date(2026, 5, 1, 15, 4, 5, 0, time.UTC)

// view is a deployment as Dashboard fills it in, from its limits and the
// store's counts.
func view(name string, tpm, rpm, reserved int64) budget.DeploymentView {
	v := budget.DeploymentView{
		Name: name, Quota: name, ConfiguredTPM: tpm, EffectiveTPM: tpm, RPM: rpm,
		Reserved: reserved, FleetRateLimited: map[budget.Cause]int64{},
	}
	v.ReservedFraction = float64(reserved) / float64(tpm)
	return v
}

func dashboard(vs ...budget.DeploymentView) budget.Dashboard {
	d := budget.Dashboard{At: at, Deployments: vs, Agents: 3}
	lo, hi := 1.0, 0.0
	for _, v := range vs {
		d.ReservedTokens += v.Reserved
		lo, hi = min(lo, v.ReservedFraction), max(hi, v.ReservedFraction)
	}
	if len(vs) > 0 {
		d.Spread = hi - lo
	}
	return d
}

// frame renders d and checks what every frame must: no line wider than
// the width, and, with a height, no more lines than it.
func frame(t *testing.T, d budget.Dashboard, o Options) string {
	t.Helper()
	lines := Render(d, at, o)
	w := o.Width
	if w == 0 {
		w = DefaultWidth
	}
	for i, l := range lines {
		if l.Width() > w {
			t.Errorf("line %d is %d cells wide, more than %d:\n%s", i, l.Width(), w, l)
		}
	}
	if o.Height > 0 && len(lines) > o.Height {
		t.Errorf("%d lines, more than the height %d", len(lines), o.Height)
	}
	return Text(lines)
}

var barRE = regexp.MustCompile(`\[(#*)(\.*)\]`)

func TestTopBars(t *testing.T) {
	d := dashboard(
		view("empty", 100_000, 600, 0),
		view("quarter", 100_000, 600, 25_000),
		view("full", 100_000, 600, 100_000),
		view("a-little", 100_000, 600, 10),
	)
	out := frame(t, d, Options{Name: "fleet.yaml"})
	t.Logf("\n%s", out)
	want := map[string]float64{"empty": 0, "quarter": 0.25, "full": 1}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		m := barRE.FindStringSubmatch(line)
		frac, ok := want[f[0]]
		if f[0] == "a-little" {
			if m == nil || len(m[1]) != 1 {
				t.Errorf("10 tokens of 100,000 should show one mark, not an empty bar: %q", line)
			}
			continue
		}
		if !ok {
			continue
		}
		if m == nil {
			t.Fatalf("no bar on %q", line)
		}
		n := len(m[1]) + len(m[2])
		if got := float64(len(m[1])) / float64(n); got < frac-0.05 || got > frac+0.05 {
			t.Errorf("%s: bar %.2f full, want %.2f: %q", f[0], got, frac, line)
		}
		if n < minBar {
			t.Errorf("%s: a bar of %d cells at 80 columns", f[0], n)
		}
		delete(want, f[0])
	}
	if len(want) > 0 {
		t.Errorf("no line for %v", want)
	}
	for _, s := range []string{"25%", "100%", "25,000 / 100,000", "3 agents alive", "125,010 tokens reserved", "spread 100 pts"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in the frame", s)
		}
	}
}

func TestTopWidths(t *testing.T) {
	d := dashboard(view("gpt4o-eastus", 240_000, 1_440, 84_000), view("gpt4o-swedencentral", 120_000, 720, 7_200))
	d.Deployments[1].BreakerOpen = true
	d.Deployments[1].EffectiveTPM = 90_000
	d.Deployments[1].FleetRateLimited[budget.CauseTokens] = 2
	for _, w := range []int{0, 120, 80, 60, 40, 30, 20, 10, 1} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			out := frame(t, d, Options{Name: "/etc/headroom/config.yaml", Width: w})
			if w == 0 || w >= 30 {
				// Narrow frames wrap, but keep what matters.
				for _, s := range []string{"gpt4o-eastus", "OPEN", "ADJUSTED", "2/0/0/0"} {
					if !strings.Contains(out, s) {
						t.Errorf("width %d: no %q in\n%s", w, s, out)
					}
				}
			}
			if w == 40 {
				t.Logf("\n%s", out)
			}
		})
	}
}

func TestTopAdjustmentMarked(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 45_000)
	v.EffectiveTPM, v.ReservedFraction = 90_000, 0.5
	out := frame(t, dashboard(v, view("gpt4o-b", 150_000, 900, 0)), Options{})
	if !strings.Contains(out, "TPM 90,000 ADJUSTED  (configured 150,000)") {
		t.Errorf("the adjustment is not marked:\n%s", out)
	}
	if !strings.Contains(out, "45,000 / 90,000") {
		t.Errorf("the reservation is not shown against the effective limit:\n%s", out)
	}
	if strings.Count(out, "ADJUSTED") != 1 {
		t.Errorf("a deployment at its configured limit is marked too:\n%s", out)
	}
	if !strings.Contains(out, "TPM 150,000  ") {
		t.Errorf("the unadjusted limit is not shown plainly:\n%s", out)
	}
}

func TestTopBreakerOpen(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 0)
	v.BreakerOpen = true
	lines := Render(dashboard(v, view("gpt4o-b", 150_000, 900, 0)), at, Options{})
	out := Text(lines)
	if strings.Count(out, "breaker OPEN") != 1 || strings.Count(out, "breaker closed") != 1 {
		t.Errorf("want one open breaker and one closed:\n%s", out)
	}
	for _, l := range lines {
		for _, s := range l {
			if s.Text == "breaker OPEN" && s.Tone != Bad {
				t.Errorf("an open breaker in tone %d, want Bad", s.Tone)
			}
		}
	}
}

func TestTop429s(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 0)
	v.FleetRateLimited = map[budget.Cause]int64{budget.CauseTokens: 7, budget.CauseRequests: 3, budget.CauseAdjustment: 2, budget.CauseUnknown: 1}
	none := view("gpt4o-b", 150_000, 900, 0)
	none.FleetRateLimited = nil // a store without a census
	out := frame(t, dashboard(v, none, view("gpt4o-c", 150_000, 900, 0)), Options{})
	for _, s := range []string{"429s t/r/a/u 7/3/2/1", "429s: no census", "429s t/r/a/u 0/0/0/0", "tokens, requests, adjustment, unknown"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
}

// TestTopLostWrites: the fleet's lost writes show on their deployment,
// and a deployment that lost none says nothing of them.
func TestTopLostWrites(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 0)
	v.FleetWritesLost = 3
	out := frame(t, dashboard(v, view("gpt4o-b", 150_000, 900, 0)), Options{})
	if n := strings.Count(out, "writes lost"); !strings.Contains(out, "3 budget writes lost (fleet, last 24 h)") || n != 1 {
		t.Errorf("want one deployment's 3 lost writes, got %d mentions in\n%s", n, out)
	}
}

func TestTopRequestWindows(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 0)
	v.Requests1s, v.Requests10s = 15, 40
	slow := view("tiny", 1_000, 6, 0) // RPM/60 rounds to 0: at least 1
	slow.Requests1s, slow.Requests10s = 1, 1
	out := frame(t, dashboard(v, slow), Options{})
	for _, s := range []string{"requests 1s 15/15, 10s 40/150", "requests 1s 1/1, 10s 1/1"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
	// A compressed minute compresses the request windows with it.
	out = frame(t, dashboard(v), Options{Window: 6 * time.Second})
	if !strings.Contains(out, "requests 100ms 15/15, 1s 40/150") {
		t.Errorf("a 6 s window's request windows are not labelled 100ms and 1s:\n%s", out)
	}
}

func TestTopManyDeployments(t *testing.T) {
	var vs []budget.DeploymentView
	for i := range 40 {
		vs = append(vs, view(fmt.Sprintf("gpt4o-%02d", i), 100_000, 600, int64(i)*2_000))
	}
	d := dashboard(vs...)
	all := frame(t, d, Options{})
	for i := range 40 {
		if !strings.Contains(all, fmt.Sprintf("gpt4o-%02d ", i)) {
			t.Errorf("no line for gpt4o-%02d", i)
		}
	}
	out := frame(t, d, Options{Height: 24})
	if !strings.Contains(out, "more deployments: a taller terminal shows them") {
		t.Errorf("a 24-line frame of 40 deployments does not say some are left out:\n%s", out)
	}
	if !strings.Contains(out, "gpt4o-00 ") || !strings.Contains(out, "40 deployments") {
		t.Errorf("the first deployment or the fleet line is gone:\n%s", out)
	}
	// Shown plus counted is all of them.
	shown := strings.Count(out, "gpt4o-")
	var more int
	if _, err := fmt.Sscanf(out[strings.Index(out, "+"):], "+%d more", &more); err != nil || shown+more != 40 {
		t.Errorf("%d shown and %d counted, want 40 in all (%v)", shown, more, err)
	}
}

func TestTopLongNamesTruncated(t *testing.T) {
	long := "gpt4o-" + strings.Repeat("very-long-deployment-name-", 4)
	d := dashboard(view(long+"east", 100_000, 600, 50_000), view(long+"west", 100_000, 600, 0))
	out := frame(t, d, Options{Name: "/a/very/long/path/" + strings.Repeat("deep/", 20) + "config.yaml"})
	if strings.Contains(out, long) {
		t.Errorf("a name of %d characters is shown whole at 80 columns:\n%s", len(long), out)
	}
	// Cut in the middle: the ends that tell them apart stay.
	for _, end := range []string{"east", "west"} {
		if !regexp.MustCompile(`(?m)^gpt4o-very-\S*~\S*-` + end + ` `).MatchString(out) {
			t.Errorf("the long name ending in %s is not truncated in the middle with a mark:\n%s", end, out)
		}
	}
	m := barRE.FindAllString(out, -1)
	if len(m) != 2 || len(m[0]) != len(m[1]) || len(m[0]) < minBar {
		t.Errorf("bars do not line up at a useful width: %q", m)
	}
	if !strings.Contains(out, "2026-05-01 15:04:05") || !strings.Contains(out, "/deep/config.yaml") {
		t.Errorf("a long config name pushed the time out, or lost its end:\n%s", out)
	}
}

func TestTopSharedQuotaAndNoCensus(t *testing.T) {
	a, b := view("gpt4o-a", 150_000, 900, 30_000), view("gpt4o-b", 150_000, 900, 30_000)
	a.Quota, b.Quota = "quota:sub/eastus/gpt-4o", "quota:sub/eastus/gpt-4o"
	d := dashboard(a, b)
	d.Agents = -1
	out := frame(t, d, Options{})
	for _, s := range []string{"one quota with gpt4o-b", "one quota with gpt4o-a", "agents: no census"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
}

func TestTopNotReadYet(t *testing.T) {
	out := frame(t, budget.Dashboard{}, Options{Name: "c.yaml", Note: "reading the store..."})
	if !strings.Contains(out, "headroom budget top  c.yaml") || !strings.Contains(out, "reading the store...") || strings.Contains(out, "fleet:") {
		t.Errorf("a dashboard never read should show the title and the note only:\n%s", out)
	}
}

func TestTopControlCharactersInNames(t *testing.T) {
	out := frame(t, dashboard(view("evil\x1b[2J\a", 100_000, 600, 0)), Options{Name: "c\x1b]0;x\a.yaml"})
	if strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("a control character reached the frame: %q", out)
	}
}

// TestTopPromptCache: the fleet's cached share of its prompt tokens shows
// on the deployment it was counted on, and one with none counted says
// nothing of it.
func TestTopPromptCache(t *testing.T) {
	v := view("gpt4o-a", 150_000, 900, 0)
	v.FleetPrompt = budget.PromptTokens{Prompt: 40_000, Cached: 10_240}
	out := frame(t, dashboard(v, view("gpt4o-b", 150_000, 900, 0)), Options{})
	if n := strings.Count(out, "prompt cache"); !strings.Contains(out, "prompt cache 26% of 40,000 tokens (fleet, last 1 h)") || n != 1 {
		t.Errorf("want one deployment's cached share, got %d mentions in\n%s", n, out)
	}
}
