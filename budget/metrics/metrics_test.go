package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
	"github.com/headroom-agent/headroom/budget/redisstore"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// fleet is two processes' routers on one Redis, as two containers have.
func fleet(t *testing.T) (a, b *budget.Router, cfg *budget.Config) {
	t.Helper()
	url := redistest.URL(t)
	id := budget.NewID()[:8]
	cfg = &budget.Config{Deployments: []budget.Deployment{
		{Name: "east-" + id, Endpoint: "https://east.openai.azure.com", Model: "gpt-4o", Region: "eastus", Subscription: "s", TPM: 100000, Auth: budget.Auth{Entra: true}},
		{Name: "west-" + id, Endpoint: "https://west.openai.azure.com", Model: "gpt-4o", Region: "westus", Subscription: "s", TPM: 50000, Auth: budget.Auth{Entra: true}},
	}}
	if _, err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	open := func() *budget.Router {
		rdb, err := redisstore.Dial(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(context.Background(), redisstore.Options{Client: rdb, Prefix: "metrics-" + id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r, err := budget.NewRouter(s, cfg, budget.RouterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return open(), open(), cfg
}

// One process's dashboard shows what the whole fleet holds: the store's
// reservations and census, not its own calls alone.
func TestDashboardShowsTheFleet(t *testing.T) {
	a, b, _ := fleet(t)
	ctx := context.Background()
	l, err := a.Acquire(ctx, budget.Call{Tokens: 8500, Class: budget.Interactive})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Done(ctx, budget.Outcome{Sent: false})
	d, err := b.Dashboard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Deployments) != 2 {
		t.Fatalf("%d deployments on the dashboard, want 2", len(d.Deployments))
	}
	var held *budget.DeploymentView
	for i := range d.Deployments {
		if d.Deployments[i].Name == l.Deployment.Name {
			held = &d.Deployments[i]
		}
	}
	if held == nil || held.Reserved != 8500 || held.ConfiguredTPM == 0 || held.EffectiveTPM != held.ConfiguredTPM {
		t.Fatalf("the other process's view of %s: %+v; want the 8,500 tokens reserved", l.Deployment.Name, held)
	}
	if want := 8500 / float64(held.EffectiveTPM); held.ReservedFraction != want || d.Spread != want {
		t.Errorf("reserved fraction %v, spread %v; want %v for both", held.ReservedFraction, d.Spread, want)
	}
	// The 1 s window may have turned between the reservation and the read.
	if held.Requests1s > 1 || held.Requests10s != 1 || held.RequestUtilisation <= 0 || held.TokenUtilisation <= 0 {
		t.Errorf("request windows %d/%d, utilisation tokens %v requests %v", held.Requests1s, held.Requests10s, held.TokenUtilisation, held.RequestUtilisation)
	}
	if d.ReservedTokens != 8500 {
		t.Errorf("fleet reserved %d, want 8500", d.ReservedTokens)
	}
	if d.Agents != 0 {
		t.Errorf("agents %d before any check-in, want 0", d.Agents)
	}
}

// view is a dashboard with every panel's figure set.
func view() metrics.View {
	return metrics.View{
		Dashboard: budget.Dashboard{
			At: time.UnixMilli(1764590400000), Spread: 0.4, ReservedTokens: 60000, Agents: 12,
			Shed:  map[budget.Class]int64{budget.Background: 3},
			Store: map[string]budget.StoreOpStats{"reserve": {Calls: 9, AskedAgain: 2}, "settle": {Calls: 8, Unavailable: 1, Queued: 1}},
			Deployments: []budget.DeploymentView{
				{Name: "east", ConfiguredTPM: 100000, EffectiveTPM: 80000, RPM: 600, Reserved: 40000, ReservedFraction: 0.5,
					TokenUtilisation: 0.4, RequestUtilisation: 0.2, BreakerOpen: true,
					RateLimited: map[budget.Cause]int64{budget.CauseAdjustment: 2}, FleetRateLimited: map[budget.Cause]int64{budget.CauseAdjustment: 7},
					WritesFailed: map[string]int64{budget.WriteBreaker: 1}},
				{Name: "west", ConfiguredTPM: 50000, EffectiveTPM: 50000, RPM: 300, Reserved: 5000, ReservedFraction: 0.1, RateLimited: map[budget.Cause]int64{}},
			},
		},
		Types: []metrics.Type{{Name: "click-pick", Calls: 10, TokensReserved: 12000, TokensUsed: 3000, Mended: 2, Repaired: 1}},
	}
}

func source(v metrics.View) metrics.Source {
	return func(context.Context) (metrics.View, error) { return v, nil }
}

var units = map[string]bool{"Seconds": true, "Microseconds": true, "Milliseconds": true, "Bytes": true, "Kilobytes": true,
	"Megabytes": true, "Gigabytes": true, "Terabytes": true, "Bits": true, "Kilobits": true, "Megabits": true, "Gigabits": true,
	"Terabits": true, "Percent": true, "Count": true, "Bytes/Second": true, "Kilobytes/Second": true, "Megabytes/Second": true,
	"Gigabytes/Second": true, "Terabytes/Second": true, "Bits/Second": true, "Kilobits/Second": true, "Megabits/Second": true,
	"Gigabits/Second": true, "Terabits/Second": true, "Count/Second": true, "None": true}

// checkEMF checks one line against the specification's structure and
// returns it decoded.
func checkEMF(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var o map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&o); err != nil {
		t.Fatalf("not one JSON object: %v: %s", err, line)
	}
	aws, _ := o["_aws"].(map[string]any)
	ts, ok := aws["Timestamp"].(json.Number)
	if _, err := ts.Int64(); !ok || err != nil {
		t.Fatalf("_aws.Timestamp %v is not an integer of milliseconds", aws["Timestamp"])
	}
	dirs, _ := aws["CloudWatchMetrics"].([]any)
	if len(dirs) == 0 {
		t.Fatalf("no CloudWatchMetrics: %s", line)
	}
	for _, x := range dirs {
		dir := x.(map[string]any)
		if ns, _ := dir["Namespace"].(string); ns == "" || len(ns) > 255 {
			t.Errorf("Namespace %v", dir["Namespace"])
		}
		sets, _ := dir["Dimensions"].([]any)
		if len(sets) == 0 {
			t.Errorf("no dimension set: %s", line)
		}
		for _, set := range sets {
			for _, k := range set.([]any) {
				if _, ok := o[k.(string)].(string); !ok {
					t.Errorf("dimension %v is not a string at the root: %s", k, line)
				}
			}
		}
		ms, _ := dir["Metrics"].([]any)
		if len(ms) == 0 || len(ms) > 100 {
			t.Errorf("%d metrics in a directive", len(ms))
		}
		for _, m := range ms {
			m := m.(map[string]any)
			name, _ := m["Name"].(string)
			if _, ok := o[name].(json.Number); !ok {
				t.Errorf("metric %q is not a number at the root: %s", name, line)
			}
			if u, ok := m["Unit"].(string); ok && !units[u] {
				t.Errorf("metric %q: unit %q is not one of CloudWatch's", name, u)
			}
		}
	}
	return o
}

func TestEMFLinesFollowTheSpecification(t *testing.T) {
	var buf bytes.Buffer
	if err := metrics.NewEMF(&buf, source(view())).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	byDim := map[string][]map[string]any{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		o := checkEMF(t, sc.Bytes())
		set := o["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"].([]any)[0].([]any)
		key := ""
		if len(set) > 0 {
			key = set[0].(string)
		}
		byDim[key] = append(byDim[key], o)
	}
	if len(byDim["deployment"]) != 2 || len(byDim["call_type"]) != 1 || len(byDim[""]) != 1 {
		t.Fatalf("lines by dimension: %d deployment, %d call_type, %d fleet; want 2, 1, 1", len(byDim["deployment"]), len(byDim["call_type"]), len(byDim[""]))
	}
	east := byDim["deployment"][0]
	for k, want := range map[string]string{"deployment": "east", "ReservedFraction": "0.5", "EffectiveTPM": "80000", "ConfiguredTPM": "100000",
		"BreakerOpen": "1", "StoreWritesFailed": "1", "RateLimitedAdjustment": "2", "RateLimitedTokens": "0", "FleetRateLimited": "7", "TokenUtilisation": "40",
		"TPMBelowConfigured": "20000"} {
		if got := east[k]; fmt.Sprint(got) != want {
			t.Errorf("east %s = %v, want %s", k, got, want)
		}
	}
	for k, want := range map[string]string{"ReservationError": "4", "Mended": "2", "Repaired": "1", "Invalid": "0"} {
		if got := byDim["call_type"][0][k]; got == nil || got.(json.Number).String() != want {
			t.Errorf("click-pick's %s = %v, want %s", k, got, want)
		}
	}
	// A first flush's counters are the process's totals (deltas from
	// nothing); the fleet's line has the calls of every type.
	f := byDim[""][0]
	for k, want := range map[string]string{"ActiveAgents": "12", "FleetReservedTokens": "60000", "HeadroomSpread": "0.4", "ShedBackground": "3", "ShedInteractive": "0",
		"Calls": "10", "Invalid": "0"} {
		if got := f[k]; got == nil || got.(json.Number).String() != want {
			t.Errorf("fleet %s = %v, want %s", k, got, want)
		}
	}
}

// A stopped run still writes its last figures.
func TestEMFFlushesWhenStopped(t *testing.T) {
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- metrics.NewEMF(&buf, source(view())).Run(ctx, time.Hour) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 4 {
		t.Errorf("%d lines after a stop, want one set of 4", n)
	}
}

// A writer that refuses is said at each tick and in what Run returns; the
// flushes go on.
func TestEMFSaysWhatFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := metrics.NewEMF(refusing{}, source(view()))
	told := make(chan error, 100)
	e.Failed = func(err error) { told <- err }
	done := make(chan error)
	go func() { done <- e.Run(ctx, time.Millisecond) }()
	for range 2 {
		if err := <-told; !errors.Is(err, errFull) {
			t.Errorf("told %v, want the writer's error", err)
		}
	}
	cancel()
	err := <-done
	if !errors.Is(err, errFull) || !strings.Contains(err.Error(), "flushes failed before the last") {
		t.Errorf("Run returned %v, want the failed flushes counted and the writer's error", err)
	}
}

var errFull = errors.New("no space left on device")

type refusing struct{}

func (refusing) Write([]byte) (int, error) { return 0, errFull }

func TestPrometheusSeriesPerDeployment(t *testing.T) {
	v := view()
	v.Learned = []metrics.Learned{{Task: "pay-invoice", Hits: 40, Heals: 1, Misses: map[string]int64{"element": 2, "none": 1}}}
	srv := httptest.NewServer(metrics.Handler(metrics.NewCollector(source(v), time.Second)))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`headroom_reserved_ratio{deployment="east"} 0.5`,
		`headroom_limit_tokens_per_window{deployment="east",kind="effective"} 80000`,
		`headroom_limit_tokens_per_window{deployment="east",kind="configured"} 100000`,
		`headroom_utilisation_ratio{deployment="west",dimension="tokens"} 0`,
		`headroom_rate_limited_total{cause="adjustment",deployment="east"} 2`,
		`headroom_fleet_rate_limited{cause="adjustment",deployment="east"} 7`,
		`headroom_breaker_open{deployment="east"} 1`,
		`headroom_store_writes_failed_total{deployment="east",write="open_breaker"} 1`,
		`headroom_store_writes_failed_total{deployment="west",write="settle"} 0`,
		`headroom_store_calls_total{op="reserve"} 9`,
		`headroom_store_asked_again_total{op="reserve"} 2`,
		`headroom_store_unavailable_total{op="settle"} 1`,
		`headroom_active_agents 12`,
		`headroom_headroom_spread_ratio 0.4`,
		`headroom_shed_total{priority="background"} 3`,
		`headroom_answers_refused_total{call_type="click-pick",outcome="mended"} 2`,
		`headroom_answers_refused_total{call_type="click-pick",outcome="repaired"} 1`,
		`headroom_answers_refused_total{call_type="click-pick",outcome="invalid"} 0`,
		`headroom_reservation_error_ratio{call_type="click-pick"} 4`,
		`headroom_learned_hits_total{task="pay-invoice"} 40`,
		`headroom_learned_heals_total{task="pay-invoice"} 1`,
		`headroom_learned_misses_total{reason="element",task="pay-invoice"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in the scrape", want)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^headroom_[a-z_]+\{[^}]*deployment="west"`).FindAll(body, -1)); n < 10 {
		t.Errorf("%d series for west, want one per gauge", n)
	}
}
