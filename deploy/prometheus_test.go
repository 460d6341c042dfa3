package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/headroom-agent/headroom/budget/metrics"
	_ "github.com/headroom-agent/headroom/budget/redisstore" // redis: in the config
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/redistest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

const (
	rulesFile     = "prometheus/rules.yaml"
	rulesTestFile = "prometheus/rules_test.yaml"
	dashboardFile = "grafana/headroom.json"
)

// tool finds one of the Prometheus tools, which make test installs from
// Debian's prometheus package.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (make test installs Debian's prometheus package)", name)
	}
	return p
}

// ruleGroups is rules.yaml as Prometheus reads it.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func readRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var g ruleGroups
	if err := yaml.UnmarshalStrict(b, &g); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var out []rule
	for _, gr := range g.Groups {
		out = append(out, gr.Rules...)
	}
	return out
}

// promtool checks the rules, and runs their unit tests.
func TestRulesPassPromtool(t *testing.T) {
	promtool := tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", filepath.Base(rulesFile)}, {"test", "rules", filepath.Base(rulesTestFile)}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = filepath.Dir(rulesFile)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every alert says what to do and how loud it is, and rules_test.yaml
// has it fire at least once and stay quiet at least once.
func TestEveryAlertIsTestedBothWays(t *testing.T) {
	b, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			Name  string `json:"name"`
			Evals []struct {
				Alert string            `json:"alertname"`
				Exp   []json.RawMessage `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	fires, quiet := map[string]int{}, map[string]int{}
	for _, tc := range tests.Tests {
		for _, e := range tc.Evals {
			if len(e.Exp) > 0 {
				fires[e.Alert]++
			} else {
				quiet[e.Alert]++
			}
		}
	}
	alerts := 0
	for _, r := range readRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts++
		if fires[r.Alert] == 0 || quiet[r.Alert] == 0 {
			t.Errorf("%s: %d tests where it fires, %d where it stays quiet; want one of each", r.Alert, fires[r.Alert], quiet[r.Alert])
		}
		if s := r.Labels["severity"]; s != "page" && s != "ticket" {
			t.Errorf("%s: severity %q, want page or ticket", r.Alert, s)
		}
		for _, a := range []string{"summary", "description", "runbook"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, a)
			}
		}
	}
	if alerts < 8 {
		t.Errorf("%d alerts in %s", alerts, rulesFile)
	}
}

// dashboard is what the test reads of the Grafana dashboard.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// query is one PromQL expression the dashboard or the rules hold, and
// where it is.
type query struct{ where, expr string }

// dashboardQueries are the panels' queries, the dashboard's variables
// given the values Grafana sends for All, and the variables' own
// label_values queries as the selectors they read.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	vars := strings.NewReplacer(`$job`, `.*`, `$deployment`, `.*`, `$call_type`, `.*`, `$__rate_interval`, `30s`, `$__interval`, `10s`)
	var out []query
	for _, p := range d.Panels {
		for i, tg := range p.Targets {
			out = append(out, query{fmt.Sprintf("panel %q, target %d", p.Title, i+1), vars.Replace(tg.Expr)})
		}
	}
	names := map[string]bool{}
	labelValues := regexp.MustCompile(`^label_values\((.+), *[a-z_]+\)$`)
	for _, v := range d.Templating.List {
		names[v.Name] = true
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
		if m == nil {
			t.Errorf("variable %s: query %v is not label_values(SELECTOR, LABEL)", v.Name, q["query"])
			continue
		}
		out = append(out, query{"variable " + v.Name, vars.Replace(m[1])})
	}
	for _, want := range []string{"datasource", "job", "deployment", "call_type"} {
		if !names[want] {
			t.Errorf("the dashboard has no %s variable", want)
		}
	}
	return out
}

// selector is a headroom metric with its labels, as an expression names it.
var selector = regexp.MustCompile(`headroom_[a-z0-9_]+(\{[^}]*\})?`)

// A real Prometheus scrapes the fleet exporter while a short fleet runs:
// several short-lived callers on one Redis, each making calls of the
// four built-in types against the simulator over HTTP, ending a run and
// going away, as containers do. Then every panel's query returns series,
// every alert's expression evaluates, every metric selector it names
// returns series, and every rule evaluates without error. A metric
// renamed in the exporter and not here fails.
func TestPrometheusReadsEveryPanelAndAlert(t *testing.T) {
	prom := tool(t, "prometheus")
	dashQueries := dashboardQueries(t)
	rules := readRules(t)

	f := fleetConfig(t)
	exp := metrics.NewExporter(&f.Budget)
	defer exp.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := metrics.Serve(l, exp.Source(), func(err error) { t.Errorf("exporter: %v", err) })
	defer stop()

	api := startPrometheus(t, prom, l.Addr().String())
	runFleet(t, f, 4, 6*time.Second)

	// The last totals are told as the last agent closes; a rate needs two
	// scrapes of them.
	waitFor(t, 20*time.Second, "the fleet's runs in Prometheus, scraped twice", func() bool {
		r, err := api.query(`sum(headroom_runs_total{status="succeeded"})`)
		n, _ := api.query(`count_over_time(headroom_runs_total{status="succeeded"}[30s])`)
		return err == nil && len(r) == 1 && r[0].Value[1] == "4" && len(n) == 1 && n[0].Value[1] != "1"
	})
	for _, q := range dashQueries {
		if r, err := api.query(q.expr); err != nil || len(r) == 0 {
			t.Errorf("%s: %s returns %d series (%v)", q.where, q.expr, len(r), err)
		}
	}
	for _, r := range rules {
		name := r.Alert + r.Record
		if _, err := api.query(r.Expr); err != nil {
			t.Errorf("rule %s: %v", name, err)
		}
		for _, s := range selector.FindAllString(r.Expr, -1) {
			if got, err := api.query(s); err != nil || len(got) == 0 {
				t.Errorf("rule %s: %s returns %d series (%v)", name, s, len(got), err)
			}
		}
	}
	waitFor(t, 10*time.Second, "every rule evaluated", func() bool {
		health, err := api.rules()
		if err != nil || len(health) != len(rules) {
			return false
		}
		for name, h := range health {
			if h != "ok" {
				t.Logf("rule %s: %s", name, h)
				return false
			}
		}
		return true
	})
}

// fleetConfig is two deployments of separate quotas on the simulator,
// sharing the Redis of the tests under a prefix of their own.
func fleetConfig(t *testing.T) *config.File {
	t.Helper()
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "east", Model: "gpt-4o", TPM: 600_000, Reply: "h"},
		{Name: "west", Model: "gpt-4o", TPM: 300_000, Reply: "h"},
	}}, azuresim.Options{Models: map[string]azuresim.Model{"h": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	f, _, err := config.Parse("headroom.yaml", []byte(fmt.Sprintf(`redis: %s
redis_prefix: live%d
deployments:
  - {name: east, endpoint: %s, deployment: east, model: gpt-4o, region: eastus, subscription: s, tpm: 600000, auth: {api_key_env: K}}
  - {name: west, endpoint: %s, deployment: west, model: gpt-4o, region: westus, subscription: s, tpm: 300000, auth: {api_key_env: K}}
`, redistest.URL(t), time.Now().UnixNano(), run.URL, run.URL)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runFleet runs n agents over about d, each opening its own caller (a
// container's), calling each built-in type on its example input a few
// times, ending one run and closing.
func runFleet(t *testing.T, f *config.File, n int, d time.Duration) {
	t.Helper()
	inputs := map[string][]byte{}
	for _, typ := range []string{"planning", "click-pick", "yes-no", "summarize"} {
		b, err := os.ReadFile(filepath.Join("..", "calltypes", "examples", typ+".json"))
		if err != nil {
			t.Fatal(err)
		}
		inputs[typ] = b
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * d / time.Duration(2*n)) // they start apart, as a fanout does
			c, err := llm.Open(ctx, f, llm.Options{Types: calltypes.Default(), Dispatcher: llm.DispatcherOptions{Getenv: func(string) string { return "k" }}})
			if err != nil {
				t.Error(err)
				return
			}
			for until := time.Now().Add(d / 2); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
				for typ, in := range inputs {
					// A call may fail on a loaded machine (sent too late
					// for the pacing); the figures count it either way.
					if _, _, err := c.Call(ctx, typ, in, llm.CallOptions{Session: fmt.Sprint("agent-", i)}); err != nil {
						t.Logf("agent %d, %s: %v", i, typ, err)
					}
				}
			}
			c.CountRun("succeeded")
			if err := c.Close(); err != nil {
				t.Errorf("agent %d: close: %v", i, err)
			}
		})
	}
	wg.Wait()
}

// promAPI is a running Prometheus's HTTP API.
type promAPI struct{ base string }

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query evaluates expr now: its vector, or an error for one Prometheus
// refused.
func (p promAPI) query(expr string) ([]sample, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s", r.Error)
	}
	var out []sample
	if r.Data.ResultType == "vector" {
		err = json.Unmarshal(r.Data.Result, &out)
	}
	for i := range out {
		out[i].Value[1] = fmt.Sprint(out[i].Value[1])
	}
	return out, err
}

// rules is each loaded rule's health, once every rule was evaluated.
func (p promAPI) rules() (map[string]string, error) {
	resp, err := http.Get(p.base + "/api/v1/rules")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name           string `json:"name"`
					Health         string `json:"health"`
					LastError      string `json:"lastError"`
					LastEvaluation string `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, g := range r.Data.Groups {
		for _, rl := range g.Rules {
			out[rl.Name] = strings.TrimSpace(rl.Health + " " + rl.LastError)
		}
	}
	return out, nil
}

// startPrometheus runs prometheus scraping target every second, with the
// rules loaded, until the test ends.
func startPrometheus(t *testing.T, bin, target string) promAPI {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: headroom-exporter
    static_configs: [{targets: [%q]}]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus's log:\n%s", b)
		}
		log.Close()
	})
	api := promAPI{"http://" + addr}
	waitFor(t, 30*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(api.base + "/-/ready")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return api
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// The Prometheus Operator's PrometheusRule holds rules.yaml's groups as
// they are: the two files are one set of alerts.
func TestPrometheusRuleHoldsTheRules(t *testing.T) {
	var pr *monitoringv1.PrometheusRule
	for _, o := range decodeMonitoring(t, "kubernetes/prometheusrule.yaml") {
		if r, ok := o.(*monitoringv1.PrometheusRule); ok {
			pr = r
		}
	}
	if pr == nil {
		t.Fatal("kubernetes/prometheusrule.yaml holds no PrometheusRule")
	}
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if !reflect.DeepEqual(pr.Spec, want) {
		got, _ := yaml.Marshal(pr.Spec)
		t.Errorf("kubernetes/prometheusrule.yaml's groups differ from %s; its spec is:\n%s", rulesFile, got)
	}
	if len(want.Groups) == 0 {
		t.Errorf("%s has no groups", rulesFile)
	}
}
