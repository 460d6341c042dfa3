package calibrate

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// counter stands in for a deployment's token window, counted the way
// the simulator counts it: windows on multiples of their length, the
// charge (the estimate times scale) at admission, the headers as they
// stand after it, and with refund the unused part given back before the
// answer returns.
type counter struct {
	mu     sync.Mutex
	window time.Duration
	limit  int64
	refund bool
	scale  float64
	// resetAt empties the count before those calls (1-based), as a
	// window ending would; noise charges another client's tokens before
	// them; noHeaders leaves the rate-limit headers out.
	resetAt   map[int]bool
	noise     map[int]int64
	noHeaders bool
	// slow delays those calls' answers after they were counted; refuse
	// answers them 429, charging nothing.
	slow   map[int]time.Duration
	refuse map[int]bool

	index, used int64
	calls       int
	windows     []int64 // the window each call fell in
}

func (c *counter) exchange(_ context.Context, _ budget.Deployment, maxTokens int64) (Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	now := time.Now()
	if i := now.UnixNano() / int64(c.window); i != c.index {
		c.index, c.used = i, 0
	}
	c.windows = append(c.windows, c.index)
	if c.resetAt[c.calls] {
		c.used = 0
	}
	c.used += c.noise[c.calls]
	est := 9 + maxTokens // a 30-character prompt
	charge := int64(math.Round(float64(est) * cmpf(c.scale, 1)))
	h := http.Header{}
	if c.refuse[c.calls] {
		h.Set("retry-after-ms", "20")
		return Answer{Status: http.StatusTooManyRequests, Header: h, Code: "429", Message: "Requests have exceeded the call rate limit."}, nil
	}
	if c.used+charge > c.limit {
		return Answer{Status: http.StatusTooManyRequests, Header: h}, nil
	}
	c.used += charge
	if !c.noHeaders {
		h.Set("x-ratelimit-limit-tokens", strconv.FormatInt(c.limit, 10))
		h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(c.limit-c.used, 10))
	}
	used := int64(21)
	if maxTokens == 1 {
		used = 15
	}
	if c.refund && charge > used {
		c.used -= charge - used
	}
	time.Sleep(c.slow[c.calls])
	return Answer{Status: http.StatusOK, Header: h, Used: used, Estimate: est, Lag: time.Millisecond, Latency: time.Millisecond}, nil
}

func cmpf(a, b float64) float64 {
	if a == 0 {
		return b
	}
	return a
}

// window is the tests' token window: long enough that a loaded machine's
// calls fit in it many times over, since Run refuses a window too short
// for its calls.
const window = time.Second

// fresh waits for the start of a window, so that a test counting calls
// does not see the calibration wait for one.
func fresh() {
	w := int64(window)
	time.Sleep(time.Until(time.Unix(0, (time.Now().UnixNano()/w+1)*w+int64(2*time.Millisecond))))
}

var dep = budget.Deployment{Name: "gpt4o", QuotaKey: "gpt4o", TPM: 120_000, RPM: 60_000}

func options(c *counter) Options {
	return Options{Exchange: c.exchange, Window: window}
}

func TestCalibrateTellsHoldFromRefund(t *testing.T) {
	for _, refund := range []bool{false, true} {
		for _, scale := range []float64{1, 1.1, 0.9} {
			c := &counter{window: window, limit: 120_000, refund: refund, scale: scale}
			fresh()
			r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
			want := Hold
			if refund {
				want = Refund
			}
			if r.Failed() || r.Recommendation != want || r.Released != refund {
				t.Errorf("refund %v, scale %v: %+v", refund, scale, r)
				continue
			}
			if math.Abs(r.EstimateRatio-scale) > 0.02*scale {
				t.Errorf("refund %v, scale %v: estimate ratio %v", refund, scale, r.EstimateRatio)
			}
			ev := r.Evidence
			if ev.Calls != 6 || ev.Rounds != 1 || len(ev.Samples) != Samples || ev.MaxTokens != DefaultMaxTokens {
				t.Errorf("refund %v, scale %v: evidence %+v", refund, scale, ev)
			}
			s := ev.Samples[0]
			if s.Charged != int64(math.Round(2009*scale)) || s.Estimate != 2009 || s.Used != 21 || s.RemainingAfterAdmission != s.RemainingBefore-s.Charged {
				t.Errorf("refund %v, scale %v: sample %+v", refund, scale, s)
			}
			if refund && s.Released != s.Unused || !refund && s.Released != 0 {
				t.Errorf("refund %v: released %d of %d", refund, s.Released, s.Unused)
			}
			if r.DispatchLagMSP99 != 1 {
				t.Errorf("lag p99 %v ms, want the calls' 1 ms", r.DispatchLagMSP99)
			}
		}
	}
}

// A window that ends between two readings makes remaining tokens rise by
// more than any refund could explain: the round does not count, and one
// more in a fresh window does.
func TestCalibrateRetriesOnceAfterAReset(t *testing.T) {
	for _, refund := range []bool{false, true} {
		var logs bytes.Buffer
		c := &counter{window: window, limit: 120_000, refund: refund, resetAt: map[int]bool{4: true}}
		o := options(c)
		o.Logf = func(format string, args ...any) { logs.WriteString(strings.TrimSpace(format) + "\n") }
		fresh()
		r := Run(context.Background(), []budget.Deployment{dep}, o)[0]
		if r.Failed() || r.Released != refund || r.Evidence.Rounds != 2 || r.Evidence.Calls != 12 || !strings.Contains(r.Evidence.Retried, "reset") {
			t.Errorf("refund %v: %+v", refund, r)
		}
		if !strings.Contains(logs.String(), "once more") {
			t.Errorf("refund %v: the retry was not told: %q", refund, logs.String())
		}
		last := c.windows[6:]
		for _, w := range last {
			if w != last[0] {
				t.Errorf("refund %v: the second round spans windows %v", refund, last)
				break
			}
		}
	}

	// Twice is not clean: no recommendation, and the error says why.
	c := &counter{window: window, limit: 120_000, resetAt: map[int]bool{4: true, 10: true}}
	fresh()
	r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if !r.Failed() || r.Recommendation != "" || r.Evidence.Calls != 12 || !strings.Contains(r.Error, "not clean twice") {
		t.Errorf("two resets: %+v", r)
	}
}

// A 429 charges nothing: the round is run again once the room is back.
func TestCalibrateRetriesAfterA429(t *testing.T) {
	c := &counter{window: window, limit: 120_000, refund: true, refuse: map[int]bool{3: true}}
	fresh()
	r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if r.Failed() || r.Recommendation != Refund || r.Evidence.Rounds != 2 || r.Evidence.Calls != 9 || !strings.Contains(r.Evidence.Retried, "HTTP 429 (429: Requests have exceeded") {
		t.Errorf("%+v", r)
	}
	c = &counter{window: window, limit: 120_000, refuse: map[int]bool{1: true, 2: true}}
	r = Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if !r.Failed() || r.Evidence.Calls != 2 || !strings.Contains(r.Error, "not clean twice") {
		t.Errorf("two 429s: %+v", r)
	}
}

// Another client's tokens between two samples make identical calls cost
// differently: not clean either.
func TestCalibrateNoticesOtherTraffic(t *testing.T) {
	c := &counter{window: window, limit: 120_000, noise: map[int]int64{5: 700}}
	fresh()
	r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if r.Failed() || r.Evidence.Rounds != 2 || !strings.Contains(r.Evidence.Retried, "another client") {
		t.Errorf("%+v", r)
	}
}

func TestCalibrateRefusesWithoutRoom(t *testing.T) {
	// 120,000 less 110,000 leaves 10,000: the calibration's ~4,050 would
	// leave less than the tenth of the limit others may need.
	c := &counter{window: window, limit: 120_000, noise: map[int]int64{1: 110_000}}
	r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if !r.Failed() || r.Evidence.Calls != 1 || !strings.Contains(r.Error, "tokens are left in this window") {
		t.Errorf("%+v", r)
	}
}

func TestCalibrateNeedsRateLimitHeaders(t *testing.T) {
	c := &counter{window: window, limit: 120_000, noHeaders: true}
	r := Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
	if !r.Failed() || r.Evidence.Calls != 1 || !strings.Contains(r.Error, "x-ratelimit-remaining-tokens") {
		t.Errorf("%+v", r)
	}
}

// Started a moment before a window ends, the calibration waits for the
// next one rather than reading across the boundary.
func TestCalibrateWaitsForAFreshWindow(t *testing.T) {
	w := int64(window)
	var c *counter
	var r Result
	// On a loaded machine the first call can leave after the boundary it
	// was timed to precede; that run tests nothing, so it is run again.
	for range 5 {
		next := time.Unix(0, (time.Now().UnixNano()/w+1)*w)
		time.Sleep(time.Until(next.Add(-10 * time.Millisecond)))
		c = &counter{window: window, limit: 120_000}
		r = Run(context.Background(), []budget.Deployment{dep}, options(c))[0]
		if len(c.windows) == 0 || c.windows[0] < next.UnixNano()/w {
			break
		}
		t.Logf("the first call left after the window it was timed for ended: again")
	}
	if r.Failed() || r.Evidence.Rounds != 1 || r.Evidence.Calls != 7 {
		t.Fatalf("%+v", r)
	}
	if c.windows[0] == c.windows[1] {
		t.Errorf("the first call and the round share window %d", c.windows[0])
	}
	for _, x := range c.windows[1:] {
		if x != c.windows[1] {
			t.Errorf("the round spans windows %v", c.windows[1:])
			break
		}
	}
}

// A first call counted in one window and answered in the next leaves its
// reading in doubt: it is read again at once, since a fresh window has
// just begun.
func TestCalibrateReadsAgainAfterAFirstCallAcrossABoundary(t *testing.T) {
	for try := 0; try < 3; try++ {
		w := int64(window)
		next := time.Unix(0, (time.Now().UnixNano()/w+1)*w)
		time.Sleep(time.Until(next.Add(-4 * time.Millisecond)))
		var logs bytes.Buffer
		c := &counter{window: window, limit: 120_000, slow: map[int]time.Duration{1: 8 * time.Millisecond}}
		o := options(c)
		o.Logf = func(format string, args ...any) { logs.WriteString(format) }
		r := Run(context.Background(), []budget.Deployment{dep}, o)[0]
		if len(c.windows) < 2 {
			t.Fatalf("%d calls: %+v; logged %q", len(c.windows), r, logs.String())
		}
		if c.windows[0] == c.windows[1] {
			continue // the sleep overshot the boundary: nothing straddled
		}
		if r.Failed() || r.Evidence.Rounds != 1 || r.Evidence.Calls != 7 || logs.Len() != 0 {
			t.Fatalf("%+v; logged %q", r, logs.String())
		}
		return
	}
	t.Skip("three starts overshot the boundary")
}

// Deployments that are one quota move each other's readings, so they are
// measured one after the other; at once, they would not read clean.
func TestCalibrateSharedQuotaOneAtATime(t *testing.T) {
	c := &counter{window: window, limit: 240_000, refund: true}
	a, b := dep, dep
	a.Name, b.Name = "east-a", "east-b"
	a.QuotaKey, b.QuotaKey = "quota:sub/eastus/gpt-4o", "quota:sub/eastus/gpt-4o"
	rs := Run(context.Background(), []budget.Deployment{a, b}, options(c))
	for _, r := range rs {
		if r.Failed() || r.Recommendation != Refund || r.Evidence.Rounds != 1 {
			t.Errorf("%+v", r)
		}
	}
	if rs[0].Deployment != "east-a" || rs[1].Deployment != "east-b" {
		t.Errorf("results out of order: %s, %s", rs[0].Deployment, rs[1].Deployment)
	}
}

func TestResetTokensAndP99(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"12", 12 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"6m0s", 0, false}, // more than a window
		{"20ms", 20 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		h := http.Header{}
		h.Set("x-ratelimit-reset-tokens", c.v)
		got, ok := resetTokens(h, time.Minute)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("reset %q: %v %v, want %v %v", c.v, got, ok, c.want, c.ok)
		}
	}
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	if got := p99ms(ms(3, 9, 1, 4, 2, 2)); got != 9 {
		t.Errorf("p99 of six calls %v, want the slowest", got)
	}
	if got := p99ms(nil); got != 0 {
		t.Errorf("p99 of none %v", got)
	}
}

func TestAdviceAndText(t *testing.T) {
	hold := Result{Deployment: "a", Recommendation: Hold, EstimateRatio: 1, Evidence: Evidence{Summary: "held", Calls: 6}}
	refund := Result{Deployment: "b", Recommendation: Refund, Released: true, EstimateRatio: 1.2, Evidence: Evidence{Summary: "given back", Calls: 6}}
	failed := Result{Deployment: "c", Error: "answered HTTP 404", Evidence: Evidence{Calls: 1}}
	cfg := Config{Name: "headroom.yaml", Refund: budget.Hold, Margin: 0.85}
	for _, c := range []struct {
		rs   []Result
		cfg  Config
		want string
	}{
		{[]Result{hold}, cfg, "refund: hold in headroom.yaml matches"},
		{[]Result{refund}, cfg, "headroom.yaml has refund: hold, and the deployments give back what a call leaves unused: set refund: refund"},
		{[]Result{hold, refund}, Config{Refund: budget.Refund}, "only hold is safe while any deployment holds: set refund: hold"},
		{[]Result{refund}, cfg, "b charges 1.200× headroom's estimate, so a margin of 0.85 lets the fleet be charged past its limit: set margin: 0.83"},
		{[]Result{failed}, cfg, ""},
	} {
		if got := Advice(c.rs, c.cfg); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("advice %q, want %q", got, c.want)
		}
	}
	var b bytes.Buffer
	if err := WriteText(&b, []Result{hold, refund, failed}, cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment  released  recommendation", "a           no        hold            1.000", "b           yes       refund", "c           -", "c: not calibrated: answered HTTP 404", "a: held."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
