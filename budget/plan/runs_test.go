package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
)

// testdata/runs holds the result.json of each task in testdata/tasks but
// fleet.yaml, each run offline (its HAR replayed, the embedded
// simulator answering): headroom run --out testdata/runs/NAME TASK.
const fixtureRuns = "testdata/runs"

// writeRun writes a result.json of steps steps over elapsed ms: a plan,
// then per step a pick and a check, each charged prompt + its cap.
func writeRun(t *testing.T, dir string, steps int, elapsedMS int64, prompt int64) {
	t.Helper()
	call := func(typ string, cap int64) map[string]any {
		return map[string]any{"type": typ, "max_tokens": cap, "n": 1, "prompt_tokens": prompt, "tokens_reserved": prompt + cap, "tokens_used": prompt + 10}
	}
	var ss []map[string]any
	for range steps {
		ss = append(ss, map[string]any{"calls": []any{call(calltypes.ClickPick, 192), call(calltypes.YesNo, 64)}})
	}
	res := map[string]any{
		"task": filepath.Base(dir), "status": "succeeded",
		"steps": ss, "calls": []any{call(calltypes.Planning, 256)},
		"totals": map[string]any{"steps": steps, "elapsed_ms": elapsedMS},
	}
	data, _ := json.Marshal(res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A plan takes the p99 of the runs' tokens a minute, which of a few runs
// is the worst one, and shows the mean beside it.
func TestRunsPlanAtP99(t *testing.T) {
	dir := t.TempDir()
	// Three runs at a step a minute; the long one, on pages whose prompts
	// are four times the size, is the tail.
	writeRun(t, filepath.Join(dir, "short"), 2, 120_000, 500)
	writeRun(t, filepath.Join(dir, "mid"), 4, 240_000, 500)
	writeRun(t, filepath.Join(dir, "deep", "long"), 8, 480_000, 2000)
	set, err := ReadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 3 || len(set.Skipped) != 0 {
		t.Fatalf("%d runs, skipped %v", len(set.Runs), set.Skipped)
	}
	b := Budget{Margin: 0.85, Quotas: []Quota{{Key: "a", TPM: 420_000, RPM: 2_520}}}
	p, err := FromRuns(b, set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rate := func(steps int, prompt float64) float64 { // tokens a minute at a step a minute
		total := prompt + 256 + float64(steps)*(2*prompt+192+64)
		return total / float64(steps)
	}
	short, mid, long := rate(2, 500), rate(4, 500), rate(8, 2000)
	if !near(p.Runs.TokensPerMinute.P99, long) || !near(p.Runs.TokensPerMinute.Mean, (short+mid+long)/3) {
		t.Errorf("tokens a minute: p99 %v, mean %v; want %v, %v", p.Runs.TokensPerMinute.P99, p.Runs.TokensPerMinute.Mean, long, (short+mid+long)/3)
	}
	if p.TokensPerAgentMinute != p.Runs.TokensPerMinute.P99 || p.AgentsByTokens != floor(357_000/long) {
		t.Errorf("planned on %v tokens an agent-minute (%d agents); want the p99, %v (%d)", p.TokensPerAgentMinute, p.AgentsByTokens, long, floor(357_000/long))
	}
	if !near(p.StepsPerMinute, 1) || p.Runs.Retimed {
		t.Errorf("pace %v steps a minute (retimed %v); want the runs' own, 1", p.StepsPerMinute, p.Runs.Retimed)
	}
	// The mix as measured: 14 steps, each a pick and a check; 3 plans.
	want := map[string]float64{calltypes.Planning: 3.0 / 14, calltypes.ClickPick: 1, calltypes.YesNo: 1}
	for _, c := range p.PerType {
		if !near(c.CallsPerStep, want[c.Type]) {
			t.Errorf("%s: %v calls a step; want %v", c.Type, c.CallsPerStep, want[c.Type])
		}
		if !near(c.FlatCharged-c.Charged, 4096-c.MaxTokens) {
			t.Errorf("%s: charged %v, %v at the flat cap: want the cap swapped", c.Type, c.Charged, c.FlatCharged)
		}
	}
	if p.PerType[0].Type != calltypes.Planning || !near(p.FirstCallTokens, (756+756+2256)/3.0) {
		t.Errorf("first call %v (%s); want the plans' mean charge", p.FirstCallTokens, p.PerType[0].Type)
	}
	// Retimed to 4 steps a minute, every run is four times as dense.
	q, err := FromRuns(b, set, Options{StepsPerMinute: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !near(q.TokensPerAgentMinute, 4*long) || !q.Runs.Retimed || q.StepsPerMinute != 4 {
		t.Errorf("retimed: %v tokens an agent-minute; want %v", q.TokensPerAgentMinute, 4*long)
	}
}

// The runs of the testdata tasks show what the caps buy: the flat cap
// costs about 3.5 times the tokens an agent-minute at the p99, as bench
// caps measures on the agent mix.
func TestRunsFlatCapFactor(t *testing.T) {
	set, err := ReadRuns(fixtureRuns)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) < 10 || len(set.Skipped) > 0 {
		t.Fatalf("%d runs, skipped %v", len(set.Runs), set.Skipped)
	}
	b, _ := load(t, articleConfig)
	p, err := FromRuns(b, set, Options{StepsPerMinute: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The smaller the pages a run's prompts carry, the more of a call's
	// charge is its cap, and the more the flat cap wastes: 6.65 on these
	// runs, whose prompts carry the compact view.
	if p.Factor < 5 || p.Factor > 8 {
		t.Errorf("factor %.2f between the flat cap's tokens an agent-minute and the caps'; want about 6.6", p.Factor)
	}
	if p.FlatCap.Agents == 0 || p.Agents < 3*p.FlatCap.Agents {
		t.Errorf("%d agents with the caps, %d with a flat 4,096: want at least 3×", p.Agents, p.FlatCap.Agents)
	}
	if p.Runs.TokensPerMinute.P99 <= p.Runs.TokensPerMinute.Mean {
		t.Errorf("p99 %v not above the mean %v", p.Runs.TokensPerMinute.P99, p.Runs.TokensPerMinute.Mean)
	}
	// Every call type of the agent shows up, charged its cap and more.
	types := calltypes.Default()
	for _, c := range p.PerType {
		ty, ok := types.Lookup(c.Type)
		if !ok || c.MaxTokens != float64(ty.MaxTokens) || c.Charged <= c.MaxTokens {
			t.Errorf("%s: cap %v, charged %v", c.Type, c.MaxTokens, c.Charged)
		}
	}
	if len(p.PerType) != 4 {
		t.Errorf("types %+v; want the agent's four", p.PerType)
	}
}

func TestReadRunsSkipsWhatItCannotUse(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "good"), 3, 60_000, 400)
	bad := map[string]string{
		"broken":    `{"steps": [`,
		"not-a-run": `{"agents": 3}`,
		"no-time":   `{"calls": [{"type": "planning", "max_tokens": 256, "n": 1, "tokens_reserved": 600}], "totals": {"steps": 0, "elapsed_ms": 0}}`,
		"no-calls":  `{"steps": [], "calls": [], "totals": {"steps": 0, "elapsed_ms": 40}}`,
		"under-cap": `{"calls": [{"type": "planning", "max_tokens": 256, "n": 1, "tokens_reserved": 100}], "totals": {"steps": 0, "elapsed_ms": 40}}`,
	}
	for name, body := range bad {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, ResultFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Only files named result.json are runs.
	if err := os.WriteFile(filepath.Join(dir, "good", "report.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := ReadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 1 || len(set.Skipped) != len(bad) {
		t.Fatalf("%d runs, skipped %+v", len(set.Runs), set.Skipped)
	}
	for _, s := range set.Skipped {
		name := filepath.Base(filepath.Dir(s.File))
		if _, ok := bad[name]; !ok || s.Reason == "" || strings.Contains(s.Reason, dir) {
			t.Errorf("skipped %s: %q", s.File, s.Reason)
		}
	}

	// With nothing usable, the error names the directory.
	if err := os.RemoveAll(filepath.Join(dir, "good")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRuns(dir); err == nil || !strings.HasPrefix(err.Error(), dir+": no usable runs") {
		t.Errorf("no usable runs: %v", err)
	}
	empty := t.TempDir()
	if _, err := ReadRuns(empty); err == nil || !strings.Contains(err.Error(), empty+": no usable runs: no result.json") {
		t.Errorf("an empty directory: %v", err)
	}
	if _, err := ReadRuns(filepath.Join(empty, "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a missing directory: %v", err)
	}
}

// writeReplay writes the result.json of a run replayed from a learned
// run: steps taken, no step call, one summary.
func writeReplay(t *testing.T, dir string, steps int, elapsedMS int64) {
	t.Helper()
	res := map[string]any{
		"task": filepath.Base(dir), "status": "succeeded", "steps": []any{},
		"calls":   []any{map[string]any{"type": calltypes.Summarize, "max_tokens": 400, "n": 1, "prompt_tokens": 600, "tokens_reserved": 1000, "tokens_used": 650}},
		"totals":  map[string]any{"steps": steps, "elapsed_ms": elapsedMS},
		"learned": map[string]any{"key": "k", "replayed": steps, "asked": 0},
	}
	data, _ := json.Marshal(res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Replayed runs are read, left out of the p99 an agent may always reach
// (any run can miss), and sized at the measured hit rate beside it.
func TestRunsPlanAtTheHitRate(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		writeRun(t, filepath.Join(dir, "model", string(rune('a'+i))), 4, 240_000, 800)
	}
	for i := range 6 {
		writeReplay(t, filepath.Join(dir, "replay", string(rune('a'+i))), 4, 20_000)
	}
	set, err := ReadRuns(dir)
	if err != nil || len(set.Runs) != 8 {
		t.Fatalf("%v, %d runs, skipped %v", err, len(set.Runs), set.Skipped)
	}
	b := Budget{Margin: 0.85, Quotas: []Quota{{Key: "a", TPM: 420_000, RPM: 2_520}}}
	p, err := FromRuns(b, set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs.Runs != 2 || p.Runs.Replayed != 6 || p.Runs.HitRate != 0.75 {
		t.Fatalf("runs %d, replayed %d, hit rate %v", p.Runs.Runs, p.Runs.Replayed, p.Runs.HitRate)
	}
	if p.AtHitRate == nil || p.AtHitRate.Agents == 0 || p.Runs.TasksPerHourLearned <= 2*p.Runs.TasksPerHour {
		t.Fatalf("at the hit rate %+v, %.0f tasks an hour against %.0f", p.AtHitRate, p.Runs.TasksPerHourLearned, p.Runs.TasksPerHour)
	}
	var out strings.Builder
	if err := Print(&out, p); err != nil || !strings.Contains(out.String(), "6 of 8 runs replayed (a hit rate of 75%)") {
		t.Errorf("%v\n%s", err, out.String())
	}
	t.Logf("%d agents, %d at the hit rate", p.Agents, p.AtHitRate.Agents)

	only := t.TempDir()
	writeReplay(t, filepath.Join(only, "r"), 3, 10_000)
	set, err = ReadRuns(only)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromRuns(b, set, Options{}); err == nil || !strings.Contains(err.Error(), "every run was replayed") {
		t.Errorf("replays alone: %v", err)
	}
}
