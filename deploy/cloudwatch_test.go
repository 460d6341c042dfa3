package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/metrics"
)

const (
	cwDashboardFile = "ecs/cloudwatch-dashboard.json"
	cwAlarmsFile    = "ecs/cloudwatch-alarms.json"
	cwAlarmsScript  = "ecs/alarms.sh"

	cwPagePlaceholder   = "arn:aws:sns:REGION:ACCOUNT:headroom-page"
	cwTicketPlaceholder = "arn:aws:sns:REGION:ACCOUNT:headroom-ticket"
)

// A cwMetricRef is a metric a dashboard widget or an alarm reads: its name,
// the exact set of dimensions it is read with (sorted, comma-joined; ""
// for none), the statistic, and where it is read.
type cwMetricRef struct {
	name, dims, stat, where string
}

// ---- Alarms -------------------------------------------------------------

// cwDecodeAlarm decodes one alarm strictly into the SDK's PutMetricAlarmInput,
// checks its enums against the SDK's values, and has the SDK's own client
// validate it and serialize it as it would send it: the request must be
// the file's object, or a field was misnamed (encoding/json matches field
// names regardless of case; the API does not).
func cwDecodeAlarm(data []byte) (*cloudwatch.PutMetricAlarmInput, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var in cloudwatch.PutMetricAlarmInput
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	if err := checkEnums(reflect.ValueOf(in), "$"); err != nil {
		return nil, err
	}
	wire, err := cwPutAlarmRequest(&in)
	if err != nil {
		return nil, err
	}
	if d := jsonDiff(data, wire); d != "" {
		return nil, fmt.Errorf("the SDK would send it otherwise (a field name in the wrong case?): %s", d)
	}
	return &in, nil
}

// cwRequestCapture is an HTTP client that keeps the request and sends nothing.
type cwRequestCapture struct {
	path string
	body []byte
}

func (c *cwRequestCapture) Do(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	c.path, c.body = r.URL.Path, b
	return nil, errCaptured
}

// cwPutAlarmRequest is the body of the PutMetricAlarm call the SDK would
// make for in, after its own validation, as JSON: the SDK speaks CBOR
// (Smithy RPC v2) to CloudWatch, with the API's member names as keys.
func cwPutAlarmRequest(in *cloudwatch.PutMetricAlarmInput) ([]byte, error) {
	hc := &cwRequestCapture{}
	client := cloudwatch.New(cloudwatch.Options{
		Region:      "us-east-1",
		Credentials: aws.AnonymousCredentials{},
		HTTPClient:  hc,
		Retryer:     aws.NopRetryer{},
	})
	_, err := client.PutMetricAlarm(context.Background(), in)
	if !errors.Is(err, errCaptured) {
		return nil, err
	}
	if !strings.HasSuffix(hc.path, "/operation/PutMetricAlarm") {
		return nil, fmt.Errorf("the SDK called %q", hc.path)
	}
	v, err := cbor.Decode(hc.body)
	if err != nil {
		return nil, fmt.Errorf("the request's CBOR: %w", err)
	}
	g, err := cwFromCBOR(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

// cwFromCBOR is v as encoding/json would decode the same document.
func cwFromCBOR(v cbor.Value) (any, error) {
	switch v := v.(type) {
	case cbor.Map:
		m := make(map[string]any, len(v))
		for k, x := range v {
			g, err := cwFromCBOR(x)
			if err != nil {
				return nil, err
			}
			m[k] = g
		}
		return m, nil
	case cbor.List:
		l := make([]any, len(v))
		for i, x := range v {
			g, err := cwFromCBOR(x)
			if err != nil {
				return nil, err
			}
			l[i] = g
		}
		return l, nil
	case cbor.String:
		return string(v), nil
	case cbor.Uint:
		return float64(v), nil
	case cbor.NegInt:
		return -float64(v), nil
	case cbor.Float32:
		return float64(v), nil
	case cbor.Float64:
		return float64(v), nil
	case cbor.Bool:
		return bool(v), nil
	case *cbor.Nil:
		return nil, nil
	}
	return nil, fmt.Errorf("the request holds a CBOR %T, which no alarm field is", v)
}

// cwLoadAlarms is the alarms file's objects, raw and decoded.
func cwLoadAlarms(t *testing.T) ([]json.RawMessage, []*cloudwatch.PutMetricAlarmInput) {
	t.Helper()
	data, err := os.ReadFile(cwAlarmsFile)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: not a JSON array: %v", cwAlarmsFile, err)
	}
	if len(raw) == 0 {
		t.Fatalf("%s: no alarms", cwAlarmsFile)
	}
	var ins []*cloudwatch.PutMetricAlarmInput
	for i, r := range raw {
		in, err := cwDecodeAlarm(r)
		if err != nil {
			t.Fatalf("%s[%d]: %v", cwAlarmsFile, i, err)
		}
		ins = append(ins, in)
	}
	return raw, ins
}

// cwTreatMissingData is the API's values for TreatMissingData, which the SDK
// types as a plain string (it has no enum to ask).
var cwTreatMissingData = []string{"breaching", "notBreaching", "ignore", "missing"}

// cwValidStat says whether s is a statistic CloudWatch reads: one of the
// SDK's Statistic values or a percentile.
func cwValidStat(s string) bool {
	return slices.Contains(cwtypes.Statistic("").Values(), cwtypes.Statistic(s)) || regexp.MustCompile(`^p\d{1,2}(\.\d+)?$`).MatchString(s)
}

var (
	cwQueryID = regexp.MustCompile(`^[a-z][A-Za-z0-9_]*$`)
	// cwInsightsQuery is the one form of Metrics Insights query the alarms
	// use: one aggregate of one metric over the metrics of exactly the
	// dimensions SCHEMA names, which is one time series, the worst (or the
	// sum) over values no alarm can know in advance.
	cwInsightsQuery = regexp.MustCompile(`^SELECT (MAX|MIN|SUM|COUNT)\(([A-Za-z][A-Za-z0-9]*)\) FROM SCHEMA\(([A-Za-z0-9_]+)((?:, *[A-Za-z0-9_]+)*)\)$`)
	cwIdentifier    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// cwInsightsRef parses a Metrics Insights query into the metric it reads.
func cwInsightsRef(q, where string) (cwMetricRef, string, error) {
	m := cwInsightsQuery.FindStringSubmatch(q)
	if m == nil {
		return cwMetricRef{}, "", fmt.Errorf("%s: query %q is not SELECT FN(Metric) FROM SCHEMA(namespace, dimension, ...)", where, q)
	}
	var dims []string
	for _, d := range strings.Split(m[4], ",") {
		if d = strings.TrimSpace(d); d != "" {
			dims = append(dims, d)
		}
	}
	stat := map[string]string{"MAX": "Maximum", "MIN": "Minimum", "SUM": "Sum", "COUNT": "SampleCount"}[m[1]]
	return cwMetricRef{name: m[2], dims: cwDimKey(dims), stat: stat, where: where}, m[3], nil
}

func cwDimKey(dims []string) string {
	d := slices.Clone(dims)
	sort.Strings(d)
	return strings.Join(d, ",")
}

// cwMathIDs is the ids a metric math expression names (function names are
// upper case, ids start lower case).
func cwMathIDs(expr string) []string {
	var ids []string
	for _, w := range cwIdentifier.FindAllString(expr, -1) {
		if w[0] >= 'a' && w[0] <= 'z' {
			ids = append(ids, w)
		}
	}
	return ids
}

// cwCheckAlarm checks what an alarm needs beyond the SDK's validation and
// returns the metrics it reads.
func cwCheckAlarm(t *testing.T, in *cloudwatch.PutMetricAlarmInput) []cwMetricRef {
	t.Helper()
	name := aws.ToString(in.AlarmName)
	where := "alarm " + name
	if !strings.HasPrefix(name, "headroom-") {
		t.Errorf("%s: name it headroom-..., to keep the fleet's alarms together", where)
	}

	desc := aws.ToString(in.AlarmDescription)
	if len(desc) > 1024 {
		t.Errorf("%s: a description of %d characters; CloudWatch takes 1024", where, len(desc))
	}
	what, runbook, ok := strings.Cut(desc, "\nRunbook: ")
	if !ok || strings.TrimSpace(what) == "" || len(strings.TrimSpace(runbook)) < 40 {
		t.Errorf("%s: the description must say what the alarm means, then a line \"Runbook: ...\" saying what to do", where)
	}

	if len(in.AlarmActions) == 0 {
		t.Errorf("%s: no AlarmActions", where)
	}
	for _, a := range slices.Concat(in.AlarmActions, in.OKActions, in.InsufficientDataActions) {
		if a != cwPagePlaceholder && a != cwTicketPlaceholder {
			t.Errorf("%s: action %q: want %s or %s, which alarms.sh replaces", where, a, cwPagePlaceholder, cwTicketPlaceholder)
		}
	}
	if len(in.OKActions) > 0 && !slices.Equal(in.OKActions, in.AlarmActions) {
		t.Errorf("%s: OKActions %q tell another topic than AlarmActions %q", where, in.OKActions, in.AlarmActions)
	}
	if tm := aws.ToString(in.TreatMissingData); !slices.Contains(cwTreatMissingData, tm) {
		t.Errorf("%s: TreatMissingData %q is not one of %s (an alarm of agents that come and go must say)", where, tm, strings.Join(cwTreatMissingData, ", "))
	}
	if in.ComparisonOperator == "" || in.Threshold == nil {
		t.Errorf("%s: no ComparisonOperator and Threshold", where)
	}
	evals, points := aws.ToInt32(in.EvaluationPeriods), aws.ToInt32(in.DatapointsToAlarm)
	if evals < 1 || points < 1 || points > evals {
		t.Errorf("%s: %d of %d datapoints: want DatapointsToAlarm set, from 1 to EvaluationPeriods", where, points, evals)
	}

	var refs []cwMetricRef
	period := func(p int32, what string) {
		if p < 60 || p%60 != 0 {
			t.Errorf("%s: %s period %d: the EMF's metrics are of standard resolution, want a multiple of 60 s", where, what, p)
		}
		if int64(p)*int64(evals) > 86400 {
			t.Errorf("%s: %d periods of %d s: more than a day", where, evals, p)
		}
	}
	switch {
	case in.MetricName != nil && len(in.Metrics) > 0:
		t.Errorf("%s: both MetricName and Metrics", where)
	case in.MetricName != nil:
		if ns := aws.ToString(in.Namespace); ns != metrics.Namespace {
			t.Errorf("%s: namespace %q, want %s", where, ns, metrics.Namespace)
		}
		if !cwValidStat(string(in.Statistic)) {
			t.Errorf("%s: statistic %q", where, in.Statistic)
		}
		period(aws.ToInt32(in.Period), "the")
		var dims []string
		for _, d := range in.Dimensions {
			dims = append(dims, aws.ToString(d.Name))
		}
		refs = append(refs, cwMetricRef{name: aws.ToString(in.MetricName), dims: cwDimKey(dims), stat: string(in.Statistic), where: where})
	case len(in.Metrics) > 0:
		ids := map[string]bool{}
		returned, insights := 0, 0
		for _, q := range in.Metrics {
			ids[aws.ToString(q.Id)] = true
		}
		for i, q := range in.Metrics {
			id := aws.ToString(q.Id)
			at := fmt.Sprintf("%s: Metrics[%d] %s", where, i, id)
			if !cwQueryID.MatchString(id) {
				t.Errorf("%s: the id must start with a lower-case letter, then letters, digits and _", at)
			}
			if q.ReturnData == nil {
				t.Errorf("%s: say ReturnData: true for the one the alarm watches, false for the others", at)
			} else if *q.ReturnData {
				returned++
			}
			switch expr := aws.ToString(q.Expression); {
			case q.MetricStat != nil && q.Expression != nil:
				t.Errorf("%s: both MetricStat and Expression", at)
			case q.MetricStat != nil:
				ms := q.MetricStat
				if ms.Metric == nil {
					t.Fatalf("%s: a MetricStat with no Metric", at)
				}
				if ns := aws.ToString(ms.Metric.Namespace); ns != metrics.Namespace {
					t.Errorf("%s: namespace %q, want %s", at, ns, metrics.Namespace)
				}
				if !cwValidStat(aws.ToString(ms.Stat)) {
					t.Errorf("%s: statistic %q", at, aws.ToString(ms.Stat))
				}
				period(aws.ToInt32(ms.Period), id)
				var dims []string
				for _, d := range ms.Metric.Dimensions {
					dims = append(dims, aws.ToString(d.Name))
				}
				refs = append(refs, cwMetricRef{name: aws.ToString(ms.Metric.MetricName), dims: cwDimKey(dims), stat: aws.ToString(ms.Stat), where: at})
			case strings.HasPrefix(expr, "SELECT "):
				insights++
				ref, ns, err := cwInsightsRef(expr, at)
				if err != nil {
					t.Error(err)
					continue
				}
				if ns != metrics.Namespace {
					t.Errorf("%s: SCHEMA(%s, ...): want the namespace %s", at, ns, metrics.Namespace)
				}
				if q.Period == nil {
					t.Errorf("%s: a Metrics Insights query in an alarm needs its Period", at)
				} else {
					period(*q.Period, id)
					// Metrics Insights queries only the last 3 hours.
					if int64(*q.Period)*int64(evals) > 3*3600 {
						t.Errorf("%s: %d periods of %d s: Metrics Insights looks back 3 hours", at, evals, *q.Period)
					}
				}
				refs = append(refs, ref)
			case strings.Contains(expr, "SEARCH("):
				t.Errorf("%s: an alarm cannot use SEARCH", at)
			case expr != "":
				for _, ref := range cwMathIDs(expr) {
					if !ids[ref] || ref == id {
						t.Errorf("%s: expression %q names %s, no other query's id", at, expr, ref)
					}
				}
			default:
				t.Errorf("%s: neither MetricStat nor Expression", at)
			}
		}
		if returned != 1 {
			t.Errorf("%s: %d queries with ReturnData true: want the one the alarm watches", where, returned)
		}
		if insights > 0 && len(in.Metrics) > 1 {
			t.Errorf("%s: a Metrics Insights query in an alarm must be its only query", where)
		}
	default:
		t.Errorf("%s: neither MetricName nor Metrics", where)
	}
	if len(refs) == 0 {
		t.Errorf("%s: reads no metric of namespace %s", where, metrics.Namespace)
	}
	return refs
}

func TestCloudWatchAlarms(t *testing.T) {
	_, ins := cwLoadAlarms(t)
	names := map[string]bool{}
	actions := map[string][]string{}
	for _, in := range ins {
		name := aws.ToString(in.AlarmName)
		if names[name] {
			t.Errorf("two alarms named %s", name)
		}
		names[name] = true
		actions[name] = in.AlarmActions
		cwCheckAlarm(t, in)
	}
	// The alarms the fleet is run with, and who each tells.
	for name, topic := range map[string]string{
		"headroom-TokenUtilisationHigh":          cwTicketPlaceholder,
		"headroom-RequestUtilisationHigh":        cwTicketPlaceholder,
		"headroom-InteractiveShed":               cwPagePlaceholder,
		"headroom-BackgroundShed":                cwTicketPlaceholder,
		"headroom-BreakerOpen":                   cwTicketPlaceholder,
		"headroom-EffectiveLimitBelowConfigured": cwTicketPlaceholder,
		"headroom-AnswersInvalid":                cwTicketPlaceholder,
		"headroom-StoreWritesFailed":             cwTicketPlaceholder,
	} {
		if !names[name] {
			t.Errorf("no alarm %s", name)
		} else if !slices.Equal(actions[name], []string{topic}) {
			t.Errorf("%s tells %q, want %s", name, actions[name], topic)
		}
	}
}

// The alarms' decoding is strict: an unknown field, a field in the wrong
// case, an enum value the SDK does not know and a missing required field
// are each refused.
func TestCloudWatchAlarmDecoderRefusesTypos(t *testing.T) {
	raw, _ := cwLoadAlarms(t)
	var plain, queries string // an alarm on one metric, one on queries
	for _, r := range raw {
		if strings.Contains(string(r), `"MetricName": "ShedInteractive"`) {
			plain = string(r)
		}
		if strings.Contains(string(r), `"Id": "invalid"`) {
			queries = string(r)
		}
	}
	if plain == "" || queries == "" {
		t.Fatalf("%s: no headroom-InteractiveShed or headroom-AnswersInvalid to change", cwAlarmsFile)
	}
	for _, tc := range []struct{ in, old, new, want string }{
		{plain, `"EvaluationPeriods"`, `"EvaluationPeriod"`, "EvaluationPeriod"},
		{plain, `"EvaluationPeriods"`, `"evaluationPeriods"`, "evaluationPeriods"},
		{plain, `"Statistic": "Sum"`, `"Statistic": "sum"`, `"sum" is not one of`},
		{plain, `"ComparisonOperator": "GreaterThanThreshold"`, `"ComparisonOperator": "GreaterThan"`, `"GreaterThan" is not one of`},
		{plain, `"Threshold": 0`, `"Threshold": "0"`, "Threshold"},
		{plain, `"AlarmName": "headroom-InteractiveShed",`, ``, "AlarmName"},
		{queries, `"ReturnData": false`, `"Returndata": false`, "Returndata"},
		{queries, `"Id": "calls", `, ``, "Id"},
	} {
		bad := strings.Replace(tc.in, tc.old, tc.new, 1)
		if bad == tc.in {
			t.Fatalf("no %s to change", tc.old)
		}
		_, err := cwDecodeAlarm([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s for %s: got %v, want an error naming %s", tc.new, tc.old, err, tc.want)
		}
	}
}

// ---- Dashboard ----------------------------------------------------------

// The dashboard body, as the CloudWatch dashboard body structure has it
// (the SDK takes the body as a string, with no type of its own): the
// fields the dashboard uses, decoded strictly and written back to compare
// key by key, since CloudWatch reads keys by their case.
type cwDashboard struct {
	Start          string     `json:"start,omitempty"`
	End            string     `json:"end,omitempty"`
	PeriodOverride string     `json:"periodOverride,omitempty"`
	Widgets        []cwWidget `json:"widgets"`
}

type cwWidget struct {
	Type       string         `json:"type"`
	X          *int           `json:"x,omitempty"`
	Y          *int           `json:"y,omitempty"`
	Width      int            `json:"width,omitempty"`
	Height     int            `json:"height,omitempty"`
	Properties cwWidgetMetric `json:"properties"`
}

type cwWidgetMetric struct {
	Metrics []cwMetricEntry `json:"metrics"`
	View    string          `json:"view,omitempty"`
	Stacked *bool           `json:"stacked,omitempty"`
	Region  string          `json:"region"`
	Title   string          `json:"title"`
	Period  int             `json:"period,omitempty"`
	Stat    string          `json:"stat,omitempty"`
	YAxis   *struct {
		Left  *cwAxis `json:"left,omitempty"`
		Right *cwAxis `json:"right,omitempty"`
	} `json:"yAxis,omitempty"`
	Annotations *struct {
		Horizontal []struct {
			Value float64 `json:"value"`
			Label string  `json:"label,omitempty"`
			Color string  `json:"color,omitempty"`
			Fill  string  `json:"fill,omitempty"`
			YAxis string  `json:"yAxis,omitempty"`
		} `json:"horizontal,omitempty"`
	} `json:"annotations,omitempty"`
	Legend *struct {
		Position string `json:"position"`
	} `json:"legend,omitempty"`
	LiveData *bool `json:"liveData,omitempty"`
}

type cwAxis struct {
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	Label     string   `json:"label,omitempty"`
	ShowUnits *bool    `json:"showUnits,omitempty"`
}

// A cwMetricEntry is one of a widget's metrics: [namespace, name, dimension,
// value, ..., {options}], or [{expression options}].
type cwMetricEntry struct {
	Words []string
	Opts  *cwRenderOpts
}

type cwRenderOpts struct {
	Expression string `json:"expression,omitempty"`
	ID         string `json:"id,omitempty"`
	Label      string `json:"label,omitempty"`
	Stat       string `json:"stat,omitempty"`
	Period     int    `json:"period,omitempty"`
	YAxis      string `json:"yAxis,omitempty"`
	Visible    *bool  `json:"visible,omitempty"`
	Color      string `json:"color,omitempty"`
}

func (m *cwMetricEntry) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	for i, p := range parts {
		if len(p) > 0 && p[0] == '{' {
			if i != len(parts)-1 {
				return errors.New("a metric's options must come last")
			}
			dec := json.NewDecoder(bytes.NewReader(p))
			dec.DisallowUnknownFields()
			m.Opts = &cwRenderOpts{}
			if err := dec.Decode(m.Opts); err != nil {
				return err
			}
			continue
		}
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return fmt.Errorf("a metric's words are strings: %w", err)
		}
		m.Words = append(m.Words, s)
	}
	return nil
}

func (m cwMetricEntry) MarshalJSON() ([]byte, error) {
	var parts []any
	for _, w := range m.Words {
		parts = append(parts, w)
	}
	if m.Opts != nil {
		parts = append(parts, m.Opts)
	}
	return json.Marshal(parts)
}

func cwLoadDashboard(t *testing.T) cwDashboard {
	t.Helper()
	data, err := os.ReadFile(cwDashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d cwDashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", cwDashboardFile, err)
	}
	back, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := jsonDiff(data, back); diff != "" {
		t.Fatalf("%s: a key in the wrong case, or a value the structure does not take: %s", cwDashboardFile, diff)
	}
	return d
}

// cwSearch is the one form of SEARCH the dashboard uses: the metrics of
// exactly the dimensions the braces name, by exact name.
var cwSearch = regexp.MustCompile(`^SEARCH\('\{([A-Za-z0-9_]+)((?:, *[A-Za-z0-9_]+)*)\} MetricName="([A-Za-z][A-Za-z0-9]*)"', '([A-Za-z0-9.]+)', ([0-9]+)\)$`)

// cwDashboardRefs checks the dashboard's widgets and returns the metrics
// they read.
func cwDashboardRefs(t *testing.T, d cwDashboard) []cwMetricRef {
	t.Helper()
	if len(d.Widgets) == 0 || len(d.Widgets) > 500 {
		t.Fatalf("%d widgets", len(d.Widgets))
	}
	views := []string{"timeSeries", "singleValue", "gauge", "bar", "pie"}
	var refs []cwMetricRef
	titles := map[string]bool{}
	for i, w := range d.Widgets {
		p := w.Properties
		where := fmt.Sprintf("widget %d %q", i, p.Title)
		if w.Type != "metric" {
			t.Errorf("%s: type %q, want metric", where, w.Type)
		}
		if p.Title == "" || titles[p.Title] {
			t.Errorf("%s: each widget needs a title of its own", where)
		}
		titles[p.Title] = true
		if w.X == nil || w.Y == nil || w.Width < 1 || *w.X+w.Width > 24 || w.Height < 1 {
			t.Errorf("%s: place it on the grid of 24 columns", where)
		}
		if !regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`).MatchString(p.Region) {
			t.Errorf("%s: region %q: a metric widget needs one", where, p.Region)
		}
		if !slices.Contains(views, p.View) {
			t.Errorf("%s: view %q", where, p.View)
		}
		if len(p.Metrics) == 0 || len(p.Metrics) > 500 {
			t.Errorf("%s: %d metrics", where, len(p.Metrics))
		}
		ids := map[string]bool{}
		for _, m := range p.Metrics {
			if m.Opts != nil && m.Opts.ID != "" {
				if ids[m.Opts.ID] {
					t.Errorf("%s: two metrics of id %s", where, m.Opts.ID)
				}
				ids[m.Opts.ID] = true
			}
		}
		for j, m := range p.Metrics {
			at := fmt.Sprintf("%s: metrics[%d]", where, j)
			o := m.Opts
			if o == nil {
				o = &cwRenderOpts{}
			}
			if o.ID != "" && !cwQueryID.MatchString(o.ID) {
				t.Errorf("%s: id %q must start with a lower-case letter", at, o.ID)
			}
			if o.YAxis != "" && o.YAxis != "left" && o.YAxis != "right" {
				t.Errorf("%s: yAxis %q", at, o.YAxis)
			}
			switch {
			case o.Expression != "" && len(m.Words) > 0:
				t.Errorf("%s: an expression and a metric in one entry", at)
			case o.Expression != "":
				if o.ID == "" {
					t.Errorf("%s: an expression needs an id", at)
				}
				if s := cwSearch.FindStringSubmatch(o.Expression); s != nil {
					if s[1] != metrics.Namespace {
						t.Errorf("%s: SEARCH in namespace %s, want %s", at, s[1], metrics.Namespace)
					}
					var dims []string
					for _, d := range strings.Split(s[2], ",") {
						if d = strings.TrimSpace(d); d != "" {
							dims = append(dims, d)
						}
					}
					if n, _ := strconv.Atoi(s[5]); n < 60 || n%60 != 0 {
						t.Errorf("%s: SEARCH's period %s: want a multiple of 60 s", at, s[5])
					}
					refs = append(refs, cwMetricRef{name: s[3], dims: cwDimKey(dims), stat: s[4], where: at})
					continue
				}
				if strings.Contains(o.Expression, "SEARCH(") || strings.Contains(o.Expression, "SELECT ") {
					t.Errorf("%s: expression %q: write SEARCH('{headroom,DIMENSION} MetricName=\"NAME\"', 'STAT', PERIOD)", at, o.Expression)
					continue
				}
				for _, ref := range cwMathIDs(o.Expression) {
					if !ids[ref] || ref == o.ID {
						t.Errorf("%s: expression %q names %s, no other metric's id", at, o.Expression, ref)
					}
				}
			default:
				if len(m.Words) < 2 || len(m.Words)%2 != 0 {
					t.Errorf("%s: %q: want [namespace, name, dimension, value, ...]", at, m.Words)
					continue
				}
				if m.Words[0] != metrics.Namespace {
					t.Errorf("%s: namespace %q, want %s", at, m.Words[0], metrics.Namespace)
				}
				var dims []string
				for k := 2; k < len(m.Words); k += 2 {
					dims = append(dims, m.Words[k])
				}
				stat := o.Stat
				if stat == "" {
					stat = p.Stat
				}
				if stat == "" {
					t.Errorf("%s: no stat: CloudWatch would graph the Average", at)
				}
				refs = append(refs, cwMetricRef{name: m.Words[1], dims: cwDimKey(dims), stat: stat, where: at})
			}
		}
	}
	for _, r := range refs {
		if !cwValidStat(r.stat) {
			t.Errorf("%s: statistic %q", r.where, r.stat)
		}
	}
	return refs
}

func TestCloudWatchDashboard(t *testing.T) {
	d := cwLoadDashboard(t)
	refs := cwDashboardRefs(t, d)
	// The panels, each by one metric it must show.
	for _, want := range []cwMetricRef{
		{name: "ReservedFraction", dims: "deployment", stat: "Maximum"},
		{name: "HeadroomSpread", dims: "", stat: "Maximum"},
		{name: "RateLimitedTokens", dims: "deployment", stat: "Sum"},
		{name: "RateLimitedRequests", dims: "deployment", stat: "Sum"},
		{name: "RateLimitedAdjustment", dims: "deployment", stat: "Sum"},
		{name: "RateLimitedUnknown", dims: "deployment", stat: "Sum"},
		{name: "ReservationError", dims: "call_type", stat: "Maximum"},
		{name: "EffectiveTPM", dims: "deployment", stat: "Minimum"},
		{name: "ConfiguredTPM", dims: "deployment", stat: "Maximum"},
		{name: "ActiveAgents", dims: "", stat: "Maximum"},
		{name: "FleetReservedTokens", dims: "", stat: "Maximum"},
		{name: "ShedInteractive", dims: "", stat: "Sum"},
		{name: "ShedBackground", dims: "", stat: "Sum"},
		{name: "EstimateRatio", dims: "deployment", stat: "Maximum"},
		{name: "PacingAllowance", dims: "deployment", stat: "Maximum"},
		{name: "Calls", dims: "call_type", stat: "Sum"},
		{name: "Invalid", dims: "call_type", stat: "Sum"},
		{name: "TokenUtilisation", dims: "deployment", stat: "Maximum"},
		{name: "RequestUtilisation", dims: "deployment", stat: "Maximum"},
		{name: "Runs", dims: "status", stat: "Sum"},
	} {
		if !slices.ContainsFunc(refs, func(r cwMetricRef) bool { return r.name == want.name && r.dims == want.dims && r.stat == want.stat }) {
			t.Errorf("the dashboard does not show %s of %s (dimensions %q)", want.stat, want.name, want.dims)
		}
	}
}

// ---- What the EMF writes ------------------------------------------------

// cwEmfView is a view with every line the EMF writes, and every metric any
// panel or alarm reads non-zero, so a counter (its delta 0 on a second
// flush of the same view) tells itself from a gauge (the same again).
func cwEmfView() metrics.View {
	all := func(n int64) map[budget.Cause]int64 {
		return map[budget.Cause]int64{budget.CauseTokens: n, budget.CauseRequests: n + 1, budget.CauseAdjustment: n + 2, budget.CauseUnknown: n + 3}
	}
	return metrics.View{
		Dashboard: budget.Dashboard{
			At: time.UnixMilli(1764590400000), Spread: 0.3, ReservedTokens: 70000, Agents: 40,
			Shed: map[budget.Class]int64{budget.Interactive: 1, budget.Background: 6},
			Deployments: []budget.DeploymentView{{
				Name: "eastus-gpt-4o", ConfiguredTPM: 240000, EffectiveTPM: 200000, RPM: 1440,
				Reserved: 60000, ReservedFraction: 0.3, TokenUtilisation: 0.25, RequestUtilisation: 0.4,
				Requests1s: 3, Requests10s: 20, BreakerOpen: true, Answered: 90,
				RateLimited: all(1), FleetRateLimited: all(5),
				WritesFailed: map[string]int64{budget.WriteSettle: 1, budget.WriteBreaker: 1},
				Model:        &budget.ModelView{Ratio: 1.08, Learned: true, Safety: 0.1, Margin: 0.83, Pacing: 400 * time.Millisecond},
			}},
		},
		Types: []metrics.Type{{
			Name: "click-pick", Calls: 120, TokensReserved: 96000, TokensUsed: 30000,
			Mended: 3, Repaired: 2, Invalid: 1, Images: 100, ImageTokens: 85000, TierFallbacks: 1,
			PromptTokens: map[string]int64{"eastus-gpt-4o": 25000}, CachedTokens: map[string]int64{"eastus-gpt-4o": 12000},
		}},
		Learned: []metrics.Learned{{Task: "pay-invoice", Hits: 4, Heals: 1, Misses: map[string]int64{"element": 1}}},
		Runs:    map[string]int64{"succeeded": 30, "failed": 2},
	}
}

// cwEmfMetric is what the EMF writes of one metric under one dimension set.
type cwEmfMetric struct {
	first, second float64 // its value on a first flush, and on a second of the same view
}

// cwEmitted flushes src's view twice through the EMF and returns each
// metric it writes, by "dimensions|name", namespace by namespace.
func cwEmitted(t *testing.T, v metrics.View) map[string]map[string]*cwEmfMetric {
	t.Helper()
	var buf bytes.Buffer
	e := metrics.NewEMF(&buf, func(context.Context) (metrics.View, error) { return v, nil })
	out := map[string]map[string]*cwEmfMetric{}
	for flush := range 2 {
		buf.Reset()
		if err := e.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				AWS struct {
					CloudWatchMetrics []struct {
						Namespace  string
						Dimensions [][]string
						Metrics    []struct{ Name, Unit string }
					}
				} `json:"_aws"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("an EMF line: %v: %s", err, sc.Bytes())
			}
			var values map[string]any
			if err := json.Unmarshal(sc.Bytes(), &values); err != nil {
				t.Fatal(err)
			}
			for _, d := range line.AWS.CloudWatchMetrics {
				if out[d.Namespace] == nil {
					out[d.Namespace] = map[string]*cwEmfMetric{}
				}
				for _, set := range d.Dimensions {
					for _, m := range d.Metrics {
						x, ok := values[m.Name].(float64)
						if !ok {
							t.Fatalf("metric %s is not a number: %s", m.Name, sc.Bytes())
						}
						k := cwDimKey(set) + "|" + m.Name
						if out[d.Namespace][k] == nil {
							out[d.Namespace][k] = &cwEmfMetric{first: math.NaN(), second: math.NaN()}
						}
						if flush == 0 {
							out[d.Namespace][k].first = x
						} else {
							out[d.Namespace][k].second = x
						}
					}
				}
			}
		}
	}
	return out
}

// Every metric the dashboard and the alarms read is one the EMF writes,
// in the namespace and with exactly the dimensions they read it with; a
// counter (written as what it rose) is read with Sum, a gauge never is.
func TestCloudWatchReadsWhatTheEMFWrites(t *testing.T) {
	refs := cwDashboardRefs(t, cwLoadDashboard(t))
	_, ins := cwLoadAlarms(t)
	for _, in := range ins {
		refs = append(refs, cwCheckAlarm(t, in)...)
	}
	written := cwEmitted(t, cwEmfView())[metrics.Namespace]
	if len(written) == 0 {
		t.Fatalf("the EMF writes nothing in namespace %s", metrics.Namespace)
	}
	for _, r := range refs {
		m := written[r.dims+"|"+r.name]
		if m == nil {
			var with []string
			for k := range written {
				if dims, name, _ := strings.Cut(k, "|"); name == r.name {
					with = append(with, fmt.Sprintf("%q", dims))
				}
			}
			t.Errorf("%s reads %s with dimensions %q; the EMF writes it with %v", r.where, r.name, r.dims, with)
			continue
		}
		switch {
		case m.first == 0:
			t.Errorf("%s: %s is 0 in the test's view: set it, so a counter tells itself from a gauge", r.where, r.name)
		case m.second == 0 && r.stat != "Sum" && r.stat != "SampleCount":
			t.Errorf("%s: %s is a counter, written as what it rose: read it with Sum, not %s", r.where, r.name, r.stat)
		case m.second == m.first && r.stat == "Sum":
			t.Errorf("%s: %s is a gauge, written by every agent: Sum adds it up once a line; read it with Maximum or Minimum", r.where, r.name)
		case m.second != 0 && m.second != m.first:
			t.Errorf("%s: %s is %v, then %v on the same view: neither a gauge nor a delta", r.where, r.name, m.first, m.second)
		}
	}
}

// ---- alarms.sh ----------------------------------------------------------

var (
	cwPageTopic   = "arn:aws:sns:eu-west-1:123456789012:fleet-page"
	cwTicketTopic = "arn:aws:sns:eu-west-1:123456789012:fleet-ticket"
	cwAlarmsArgs  = []string{"--page-topic", cwPageTopic, "--ticket-topic", cwTicketTopic}
)

// cwAlarmsEnv is the environment with a PATH of dir alone, so no aws is
// found unless dir holds one: the script needs nothing besides bash.
func cwAlarmsEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+dir)
}

// cwCheckPutAlarm checks one aws cloudwatch put-metric-alarm command line
// and returns the alarm it puts, decoded as the file's are.
func cwCheckPutAlarm(t *testing.T, words []string) *cloudwatch.PutMetricAlarmInput {
	t.Helper()
	want := []string{"aws", "cloudwatch", "put-metric-alarm", "--cli-input-json"}
	if len(words) != 5 || !slices.Equal(words[:4], want) {
		t.Fatalf("%q: want aws cloudwatch put-metric-alarm --cli-input-json JSON", words)
	}
	in, err := cwDecodeAlarm([]byte(words[4]))
	if err != nil {
		t.Fatalf("--cli-input-json %s: %v", words[4], err)
	}
	return in
}

// cwWithTopics is the file's alarm with the topics in place of the
// placeholders, as alarms.sh must send it.
func cwWithTopics(t *testing.T, raw json.RawMessage) *cloudwatch.PutMetricAlarmInput {
	t.Helper()
	s := strings.ReplaceAll(string(raw), cwPagePlaceholder, cwPageTopic)
	s = strings.ReplaceAll(s, cwTicketPlaceholder, cwTicketTopic)
	in, err := cwDecodeAlarm([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestAlarmsDryRun(t *testing.T) {
	bash := needBash(t)
	raw, _ := cwLoadAlarms(t)
	cmd := exec.Command(bash, append([]string{cwAlarmsScript, "--dry-run"}, cwAlarmsArgs...)...)
	cmd.Env = cwAlarmsEnv(t.TempDir()) // no aws: a dry run needs none
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(raw) {
		t.Fatalf("%d commands for %d alarms:\n%s", len(lines), len(raw), out)
	}
	for i, line := range lines {
		got := cwCheckPutAlarm(t, splitWords(t, bash, line))
		if want := cwWithTopics(t, raw[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("command %d puts %s otherwise than the file has it, with the topics", i, aws.ToString(want.AlarmName))
		}
		for _, a := range slices.Concat(got.AlarmActions, got.OKActions) {
			if a != cwPageTopic && a != cwTicketTopic {
				t.Errorf("%s: action %q is not a topic given", aws.ToString(got.AlarmName), a)
			}
		}
	}
}

// cwFakeCloudWatch writes an aws command that records its arguments, one
// file a call, and refuses the BreakerOpen alarm as a real aws would a
// limit or a permission. It uses shell builtins alone.
func cwFakeCloudWatch(t *testing.T) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	if err := os.Mkdir(calls, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
n=0
while [ -e "` + calls + `/$n" ]; do n=$((n + 1)); done
printf '%s\0' "$@" > "` + calls + `/$n"
case "$*" in
*'"AlarmName": "headroom-BreakerOpen"'*)
	echo 'An error occurred (LimitExceeded) when calling the PutMetricAlarm operation: too many alarms' >&2
	exit 254 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "aws"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, calls
}

// A real run makes the calls the dry run prints, and names the alarm that
// was not put.
func TestAlarmsRun(t *testing.T) {
	bash := needBash(t)
	dir, calls := cwFakeCloudWatch(t)

	dry := exec.Command(bash, append([]string{cwAlarmsScript, "--dry-run", "--region", "eu-west-1"}, cwAlarmsArgs...)...)
	dry.Env = cwAlarmsEnv(dir)
	printed, err := dry.Output()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bash, append([]string{cwAlarmsScript, "--region", "eu-west-1"}, cwAlarmsArgs...)...)
	cmd.Env = cwAlarmsEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("got %v, want exit status 1 for the alarm aws refused: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "alarms were not put: headroom-BreakerOpen\n") || !strings.Contains(stderr.String(), "LimitExceeded") {
		t.Errorf("stderr does not name headroom-BreakerOpen and why:\n%s", stderr.String())
	}

	lines := strings.Split(strings.TrimSpace(string(printed)), "\n")
	for i, line := range lines {
		got, err := os.ReadFile(filepath.Join(calls, strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		args := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
		want := splitWords(t, bash, line)
		if !slices.Equal(want[:3], []string{"aws", "--region", "eu-west-1"}) {
			t.Fatalf("dry run %d: %q: want aws --region eu-west-1 ...", i, want)
		}
		if !slices.Equal(args, want[1:]) {
			t.Errorf("call %d: ran %q, the dry run printed %q", i, args, want)
		}
		cwCheckPutAlarm(t, append([]string{"aws"}, args[2:]...))
	}
	if n, _ := os.ReadDir(calls); len(n) != len(lines) {
		t.Errorf("%d calls, %d printed", len(n), len(lines))
	}
}

func TestAlarmsUsage(t *testing.T) {
	bash := needBash(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("[{\"AlarmName\": \"x\"}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ticket-topic", cwTicketTopic}, "no page topic"},
		{[]string{"--page-topic", cwPageTopic}, "no ticket topic"},
		{[]string{"--page-topic", "arn:aws:sns:eu-west-1:123456789012:x\",\"y", "--ticket-topic", cwTicketTopic}, "want an SNS topic ARN"},
		{slices.Concat(cwAlarmsArgs, []string{"--region", "Europe"}), "--region Europe"},
		{slices.Concat(cwAlarmsArgs, []string{"--page-topic"}), "--page-topic needs a value"},
		{slices.Concat(cwAlarmsArgs, []string{"--bogus"}), "unknown argument: --bogus"},
		{slices.Concat(cwAlarmsArgs, []string{"--dry-run", "--file", broken}), "outside an alarm"},
		{slices.Concat(cwAlarmsArgs, []string{"--dry-run", "--file", filepath.Join(dir, "none.json")}), "cannot read"},
		{cwAlarmsArgs, "no aws"}, // not a dry run, and no aws on the PATH
	} {
		cmd := exec.Command(bash, append([]string{cwAlarmsScript}, tc.args...)...)
		cmd.Env = cwAlarmsEnv(t.TempDir())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitBadUsage || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: got %v, %s; want exit status 2 and %q", tc.args, err, out, tc.want)
		}
	}
	out, err := exec.Command(bash, cwAlarmsScript, "--help").Output()
	if err != nil || !strings.HasPrefix(string(out), "usage: alarms.sh") {
		t.Errorf("--help: %v, %s", err, out)
	}
}

func TestAlarmsShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("no shellcheck")
	}
	if out, err := exec.Command(sc, cwAlarmsScript).CombinedOutput(); err != nil {
		t.Errorf("shellcheck %s: %v\n%s", cwAlarmsScript, err, out)
	}
}
