// Package calibrate measures on a live deployment what the budget
// otherwise assumes: whether Azure gives back the unused part of a call's
// admission estimate before its token window ends (the budget's refund:
// policy), how Azure's admission charge compares with headroom's own
// estimate, and how long a call takes to be counted.
//
// It reads x-ratelimit-remaining-tokens around calls whose cap is far
// above what they use: a cap-1 call, a cap-1 call (their difference is
// what one costs), then for each sample a large-cap call (the drop is its
// charge at admission) and a cap-1 call after it has completed (the rise,
// less the small call's own cost, is what came back). All readings of a
// round fall in one token window, or the round is run once more.
//
// The calls are a function value (llm.ProbeCompletion in the binary), so
// this package links no Azure client.
package calibrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
)

// Defaults of Options.
const (
	// DefaultMaxTokens is the large calls' cap: far above the few tokens
	// their answers use, and a small share of a usual limit.
	DefaultMaxTokens = 2000
	// DefaultTimeout bounds each call.
	DefaultTimeout = 20 * time.Second
	// Samples is how many large calls a round makes; two agreeing is
	// what tells a clean reading from another client's traffic.
	Samples = 2
)

// The recommendations, as the budget config spells its refund policies.
const (
	Hold   = string(budget.Hold)
	Refund = string(budget.Refund)
)

// Answer is what one call saw.
type Answer struct {
	// Status is the HTTP status; 0 when nothing answered.
	Status int
	// Header holds the answer's x-ratelimit-* headers.
	Header http.Header
	// Code and Message are Azure's error, on a status other than 2xx.
	Code, Message string
	// Used is the answer's usage.total_tokens.
	Used int64
	// Estimate is what headroom would reserve for the call as sent: its
	// prompt estimate plus the cap × n (llm.Estimate).
	Estimate int64
	// Lag is from the request leaving to the first byte of the answer
	// whose headers count it; 0 means unknown, and Latency stands in.
	Lag, Latency time.Duration
	// ImageTokens is the published count of the image the call carried,
	// a part of Estimate (Options.ImageExchange's calls).
	ImageTokens int64
}

// Exchange sends one chat completion to d with its answer capped at
// maxTokens, outside the budget. Its error means no answer at all; it
// must never hold a secret.
type Exchange func(ctx context.Context, d budget.Deployment, maxTokens int64) (Answer, error)

// Options are what Run needs beside the deployments.
type Options struct {
	Exchange Exchange
	// ImageExchange, when set, sends the call Exchange sends capped at one
	// token with one image beside its prompt (llm.ProbeImageCompletion):
	// the drop it makes beside a cap-1 call without it is what admission
	// charges an image (Result.Image).
	ImageExchange Exchange
	// Window is the token window (the config's window:); 0 is
	// budget.DefaultWindow. Azure's is a minute; the simulator's windows
	// start on multiples of their length.
	Window time.Duration
	// MaxTokens is the large calls' cap; 0 is DefaultMaxTokens. It is
	// lowered to a tenth of a deployment's limit.
	MaxTokens int64
	// Timeout bounds each call; 0 is DefaultTimeout.
	Timeout time.Duration
	// Logf, when set, is told of waits and retries.
	Logf func(format string, args ...any)
}

// Result is one deployment's calibration.
type Result struct {
	Deployment string `json:"deployment"`
	// Released says Azure gave back at least half of what the large calls
	// left unused, inside their window.
	Released bool `json:"released"`
	// Recommendation is the refund policy that matches what Azure did:
	// refund when it gave back (nearly) all of the unused estimate, hold
	// otherwise; "" when the deployment could not be calibrated.
	Recommendation string `json:"recommendation"`
	// EstimateRatio is Azure's charge at admission for a large call over
	// headroom's estimate of it.
	EstimateRatio float64 `json:"estimate_ratio"`
	// DispatchLagMSP99 is the p99, over the cap-1 calls after the first,
	// of the time from a request leaving to the headers that count it
	// (see Answer.Lag): of a few calls, the slowest.
	DispatchLagMSP99 float64  `json:"dispatch_lag_ms_p99"`
	Evidence         Evidence `json:"evidence"`
	// Image is what admission charged an image, when Options.ImageExchange
	// was given; nil otherwise, or when its readings were not clean.
	Image *ImageCharge `json:"image,omitempty"`
	// Error says why the deployment could not be calibrated.
	Error string `json:"error,omitempty"`
}

// Failed reports a deployment that could not be calibrated.
func (r Result) Failed() bool { return r.Error != "" }

// Evidence holds the readings a result rests on.
type Evidence struct {
	// Summary says it in a sentence.
	Summary string `json:"summary"`
	// MaxTokens is the large calls' cap; LimitTokens the limit Azure
	// reported (-1: none).
	MaxTokens   int64 `json:"max_tokens"`
	LimitTokens int64 `json:"limit_tokens"`
	// SmallCharge is what a cap-1 call costs at admission, and
	// SmallEstimate headroom's estimate of it.
	SmallCharge   int64 `json:"small_charge"`
	SmallEstimate int64 `json:"small_estimate"`
	// ReleasedShare is the tokens given back over the tokens left unused,
	// over the samples.
	ReleasedShare float64  `json:"released_share"`
	Samples       []Sample `json:"samples"`
	// Calls and Rounds are what the calibration spent; a round is run
	// again when a window reset fell between its readings.
	Calls  int `json:"calls"`
	Rounds int `json:"rounds"`
	// Retried says why the first round did not count.
	Retried string `json:"retried,omitempty"`
}

// Sample is one large call and the readings around it.
type Sample struct {
	// RemainingBefore is x-ratelimit-remaining-tokens just before the
	// call; RemainingAfterAdmission its own answer's;
	// RemainingAfterCompletion the next call's, with that call's own
	// charge added back.
	RemainingBefore          int64 `json:"remaining_before"`
	RemainingAfterAdmission  int64 `json:"remaining_after_admission"`
	RemainingAfterCompletion int64 `json:"remaining_after_completion"`
	// Charged is the drop at admission; Estimate headroom's estimate of
	// the call; Used its usage; Unused = Charged − Used; Released what
	// came back by the next call.
	Charged  int64 `json:"charged"`
	Estimate int64 `json:"estimate"`
	Used     int64 `json:"used"`
	Unused   int64 `json:"unused"`
	Released int64 `json:"released"`
}

// Run calibrates each deployment of ds and returns their results in the
// same order. Deployments that share a quota are measured one after the
// other, since each one's calls move the others' readings; separate
// quotas at once.
func Run(ctx context.Context, ds []budget.Deployment, o Options) []Result {
	o.Window = cmp.Or(o.Window, budget.DefaultWindow)
	o.MaxTokens = cmp.Or(o.MaxTokens, DefaultMaxTokens)
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	out := make([]Result, len(ds))
	groups := map[string][]int{}
	var order []string
	for i, d := range ds {
		k := cmp.Or(d.QuotaKey, d.Name)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var wg sync.WaitGroup
	for _, k := range order {
		wg.Go(func() {
			for _, i := range groups[k] {
				out[i] = calibrate(ctx, ds[i], o)
			}
		})
	}
	wg.Wait()
	return out
}

// failure is a deployment that cannot be calibrated now; unclean is a
// round whose readings cannot be trusted (a window reset between them,
// another client's calls), which one more round may mend.
type (
	failure struct{ msg string }
	unclean struct{ msg string }
)

func (f *failure) Error() string { return f.msg }
func (u *unclean) Error() string { return u.msg }

func failf(format string, args ...any) error {
	return &failure{fmt.Sprintf(format, args...)}
}

func uncleanf(format string, args ...any) error {
	return &unclean{fmt.Sprintf(format, args...)}
}

// cal is one deployment's calibration in progress.
type cal struct {
	d        budget.Deployment
	o        Options
	gap      time.Duration // between sends, at the deployment's request rate
	lastSend time.Time
	calls    int
	lags     []time.Duration
}

// reading is one call's answer and when it was seen.
type reading struct {
	a         Answer
	fb        budget.Feedback
	sent, got time.Time
}

func calibrate(ctx context.Context, d budget.Deployment, o Options) Result {
	c := &cal{d: d, o: o, gap: spacing(d, o.Window)}
	res := Result{Deployment: d.Name}
	var retried string
	for round := 1; ; round++ {
		m, err := c.round(ctx)
		var u *unclean
		if err == nil {
			res = m.result(d.Name)
			res.Evidence.Rounds, res.Evidence.Retried = round, retried
			break
		}
		if !errors.As(err, &u) || round == 2 {
			msg := err.Error()
			if errors.As(err, &u) {
				msg = fmt.Sprintf("the readings were not clean twice (%s; first: %s): another client may be using the deployment or its quota; calibrate when it is idle", msg, retried)
			}
			res.Error, res.Evidence.Rounds, res.Evidence.Retried = msg, round, retried
			break
		}
		// The next round waits for a fresh window itself when too little
		// of this one is left.
		retried = u.msg
		o.Logf("%s: %s: once more", d.Name, u.msg)
	}
	if !res.Failed() && o.ImageExchange != nil {
		res.Image = c.image(ctx, res.Evidence.SmallCharge)
	}
	res.Evidence.Calls = c.calls
	res.DispatchLagMSP99 = p99ms(c.lags)
	return res
}

// spacing is the least time between two sends that keeps the calls
// inside the deployment's 1 s and 10 s request windows (scaled with a
// compressed window), with 5% to spare.
func spacing(d budget.Deployment, window time.Duration) time.Duration {
	rpm := cmp.Or(d.QuotaRPM, d.RPM, models.DefaultRPM(d.Model, d.TPM))
	one := window / 60 / time.Duration(max(1, rpm/60))
	ten := window / 6 / time.Duration(max(1, rpm/6))
	return max(one, ten) * 105 / 100
}

// guard is the time kept clear of a window's boundary: a clock apart from
// the server's, and a reset header rounded to whole seconds.
func (c *cal) guard() time.Duration {
	return min(c.o.Window/20, 500*time.Millisecond)
}

// windowLeft is how much of the current token window is left at now: by
// the clock (windows start on multiples of their length), or by the last
// answer's x-ratelimit-reset-tokens when that says less.
func (c *cal) windowLeft(now time.Time, last *reading) time.Duration {
	w := c.o.Window
	left := w - time.Duration(now.UnixNano()%int64(w))
	if last != nil {
		if reset, ok := resetTokens(last.a.Header, w); ok {
			left = min(left, reset-now.Sub(last.got))
		}
	}
	return max(0, left)
}

// index numbers the token window t falls in by the clock.
func (c *cal) index(t time.Time) int64 { return t.UnixNano() / int64(c.o.Window) }

// resetTokens reads x-ratelimit-reset-tokens: seconds, or a duration
// (6m0s, 20ms) as OpenAI writes it; only a value within one window is
// believed.
func resetTokens(h http.Header, window time.Duration) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("x-ratelimit-reset-tokens"))
	if v == "" {
		v = strings.TrimSpace(h.Get("x-rate-limit-reset-tokens"))
	}
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(s) || s < 0 || s > 1e6 {
			return 0, false
		}
		d = time.Duration(s * float64(time.Second))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, false
	}
	return d, d > 0 && d <= window+time.Second
}

func (c *cal) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
}

// call sends one call at the request rate and checks its answer carries
// what the calibration reads.
func (c *cal) call(ctx context.Context, maxTokens int64) (reading, error) {
	return c.send(ctx, c.o.Exchange, maxTokens)
}

// send makes one call through ex, spaced from the last.
func (c *cal) send(ctx context.Context, ex Exchange, maxTokens int64) (reading, error) {
	if err := c.sleep(ctx, time.Until(c.lastSend.Add(c.gap))); err != nil {
		return reading{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	sent := time.Now()
	c.lastSend = sent
	a, err := ex(cctx, c.d, maxTokens)
	got := time.Now()
	c.calls++
	if err != nil {
		if ctx.Err() != nil {
			return reading{}, fmt.Errorf("interrupted: %w", ctx.Err())
		}
		return reading{}, failf("could not be called: %v", err)
	}
	said := ""
	if a.Code != "" || a.Message != "" {
		said = fmt.Sprintf(" (%s)", strings.TrimSpace(strings.Trim(a.Code+": "+a.Message, ": ")))
	}
	switch {
	case a.Status == http.StatusTooManyRequests:
		// Nothing was charged, so the next round may go once the room
		// Azure names is back (a whole window at most).
		wait := min(budget.RetryAfter(a.Header, got), c.o.Window)
		if err := c.sleep(ctx, wait); err != nil {
			return reading{}, err
		}
		return reading{}, uncleanf("rate-limited: HTTP 429%s", said)
	case a.Status < 200 || a.Status > 299:
		return reading{}, failf("answered HTTP %d%s", a.Status, said)
	}
	fb := budget.ParseFeedback(a.Header, got)
	if fb.RemainingTokens < 0 {
		return reading{}, failf("the answer carries no x-ratelimit-remaining-tokens, so nothing can be measured: if a gateway (API Management) sits in front, let it pass the x-ratelimit-* headers")
	}
	// The lag is read on the cap-1 calls, whose answers take the least
	// time to write, so their first byte comes closest to the count; the
	// very first one warms the server's caches and the connection, which
	// a running fleet has warm.
	if maxTokens == 1 && c.calls > 1 {
		lag := a.Lag
		if lag <= 0 {
			lag = a.Latency
		}
		c.lags = append(c.lags, lag)
	}
	return reading{a: a, fb: fb, sent: sent, got: got}, nil
}

// round makes one round of calls, all in one token window, and reads
// them.
func (c *cal) round(ctx context.Context) (measure, error) {
	first, err := c.call(ctx, 1)
	if err != nil {
		return measure{}, err
	}
	limit, left := first.fb.LimitTokens, first.fb.RemainingTokens
	capTokens := c.o.MaxTokens
	if limit > 0 {
		capTokens = min(capTokens, limit/10)
	}
	if capTokens < 64 {
		return measure{}, failf("a token limit of %d leaves no room for calls whose cap far exceeds what they use", limit)
	}
	small := first.a.Estimate
	need := Samples*(small-1+capTokens) + (Samples+1)*small
	keep := cmp.Or(max(limit, 0)/10, need)
	if left-need < keep {
		return measure{}, failf("%d tokens are left in this window and the calibration takes about %d (%d calls capped at %d), which would leave less than %d for the deployment's other callers: calibrate when it is idle",
			left, need, Samples, capTokens, keep)
	}
	// The rest of the round must fit in what is left of this window, with
	// room for the calls to be slower than the first.
	rest := 2*Samples + 1
	// The first call's lag, not its latency: its connection set-up is a
	// one-off the calls after it do not pay.
	per := max(first.a.Lag, time.Millisecond)
	if first.a.Lag <= 0 {
		per = max(first.a.Latency, first.got.Sub(first.sent), time.Millisecond)
	}
	needed := 3*time.Duration(rest)*(per+c.gap) + c.guard()
	if needed > c.o.Window*8/10 {
		return measure{}, failf("a call takes %v, so the calibration's %d calls need about %v: more than the %v token window allows", per.Round(time.Millisecond), rest+1, needed.Round(time.Millisecond), c.o.Window)
	}
	// A first call that began in the last window read it or this one:
	// read again, now that a fresh window has begun.
	now := time.Now()
	wl, straddled := c.windowLeft(now, &first), c.index(first.sent) != c.index(now)
	if wl < needed || straddled {
		if wl < needed {
			c.o.Logf("%s: %v left of this token window, the calibration needs %v: waiting for the next", c.d.Name, wl.Round(time.Millisecond), needed.Round(time.Millisecond))
			if err := c.sleep(ctx, wl+c.guard()); err != nil {
				return measure{}, err
			}
		}
		if first, err = c.call(ctx, 1); err != nil {
			return measure{}, err
		}
	}
	rs := []reading{first}
	for i := range rest {
		maxTokens := int64(1)
		if i%2 == 1 {
			maxTokens = capTokens
		}
		r, err := c.call(ctx, maxTokens)
		if err != nil {
			return measure{}, err
		}
		rs = append(rs, r)
	}
	return c.read(rs, capTokens)
}

// measure is what one clean round found.
type measure struct {
	ev    Evidence
	ratio float64
}

func (m measure) result(name string) Result {
	share := m.ev.ReleasedShare
	r := Result{Deployment: name, Released: share >= 0.5, EstimateRatio: m.ratio, Evidence: m.ev, Recommendation: Hold}
	var charged, unused, released int64
	for _, x := range m.ev.Samples {
		charged, unused, released = charged+x.Charged, unused+x.Unused, released+x.Released
	}
	s, n := m.ev.Samples[0], int64(len(m.ev.Samples))
	what := thousands.Sprintf("%d calls capped at %d were charged %d each at admission (headroom's estimate: %d) and used %d", n, m.ev.MaxTokens, charged/n, s.Estimate, s.Used)
	back := thousands.Sprintf("%d of the %d tokens each left unused came back by the next call", released/n, unused/n)
	switch {
	case share >= 0.9:
		r.Recommendation = Refund
		r.Evidence.Summary = what + "; " + back + ", inside the window: Azure gives back what a call does not use"
	case share >= 0.5:
		r.Evidence.Summary = fmt.Sprintf("%s; only %s (%.0f%%): refunding all of it would count room Azure does not give", what, back, share*100)
	default:
		r.Evidence.Summary = what + "; " + back + ": Azure holds the estimate for the rest of the window"
	}
	return r
}

// read turns a round's readings (small, small, then large and small for
// each sample) into a measure, or says why they cannot be trusted.
func (c *cal) read(rs []reading, capTokens int64) (measure, error) {
	if c.index(rs[0].sent) != c.index(rs[len(rs)-1].got) {
		return measure{}, uncleanf("a token window ended during the calibration, by the clock")
	}
	if ends := windowEnds(rs, c.o.Window); ends > max(c.o.Window/2, 1500*time.Millisecond) {
		return measure{}, uncleanf("the answers' x-ratelimit-reset-tokens put their window's end %v apart", ends.Round(time.Millisecond))
	}
	rem := func(i int) int64 { return rs[i].fb.RemainingTokens }
	small := rem(0) - rem(1)
	if small <= 0 {
		return measure{}, uncleanf("remaining tokens went from %d to %d across a call: the window was reset between them", rem(0), rem(1))
	}
	ev := Evidence{MaxTokens: capTokens, LimitTokens: rs[0].fb.LimitTokens, SmallCharge: small, SmallEstimate: rs[0].a.Estimate}
	var unused, released int64
	for j := range Samples {
		pre, big, post := 1+2*j, 2+2*j, 3+2*j
		s := Sample{
			RemainingBefore:          rem(pre),
			RemainingAfterAdmission:  rem(big),
			RemainingAfterCompletion: rem(post) + small,
			Charged:                  rem(pre) - rem(big),
			Estimate:                 rs[big].a.Estimate,
			Used:                     rs[big].a.Used,
		}
		s.Unused, s.Released = s.Charged-s.Used, s.RemainingAfterCompletion-s.RemainingAfterAdmission
		tol := 2 + s.Charged/200
		switch {
		case s.Charged <= small:
			// Up, or down by less than a small call: a reset in between, or
			// an answer whose headers do not count the call itself.
			return measure{}, uncleanf("remaining tokens went from %d to %d across a call capped at %d: the window was reset, or the answer did not count its own call", rem(pre), rem(big), capTokens)
		case s.Released > max(s.Unused, 0)+tol:
			return measure{}, uncleanf("remaining tokens rose by %d after a call that left %d unused: the window was reset between the readings", s.Released, s.Unused)
		case s.Released < -tol:
			return measure{}, uncleanf("remaining tokens fell by %d more than the next call costs: another client's calls fell between the readings", -s.Released)
		}
		if j > 0 {
			// Azure's estimate may vary a little from call to call; another
			// client's call in between moves a reading by far more, or moves
			// the share given back.
			p := ev.Samples[0]
			if d := s.Charged - p.Charged; d > tol+p.Charged/5 || d < -tol-p.Charged/5 {
				return measure{}, uncleanf("two identical calls were charged %d and %d: another client's calls fell between the readings", p.Charged, s.Charged)
			}
			if d := share(s) - share(p); d > 0.25 || d < -0.25 {
				return measure{}, uncleanf("two identical calls had %.0f%% and %.0f%% of their unused estimate given back: another client's calls fell between the readings", share(p)*100, share(s)*100)
			}
		}
		ev.Samples = append(ev.Samples, s)
		unused, released = unused+max(s.Unused, 0), released+max(s.Released, 0)
	}
	if unused < capTokens/2*int64(Samples) {
		return measure{}, failf("the answers used most of their cap (%d of %d), so what is held and what is given back cannot be told apart", ev.Samples[0].Used, capTokens)
	}
	ev.ReleasedShare = math.Round(float64(released)/float64(unused)*1000) / 1000
	var charged, est int64
	for _, s := range ev.Samples {
		charged, est = charged+s.Charged, est+s.Estimate
	}
	return measure{ev: ev, ratio: math.Round(float64(charged)/float64(est)*10000) / 10000}, nil
}

// share is the part of what s left unused that came back.
func share(s Sample) float64 {
	if s.Unused <= 0 {
		return 0
	}
	return float64(max(s.Released, 0)) / float64(s.Unused)
}

// windowEnds is how far apart the answers put their window's end (the
// moment seen plus x-ratelimit-reset-tokens); 0 when they do not say.
func windowEnds(rs []reading, window time.Duration) time.Duration {
	var ends []time.Time
	for _, r := range rs {
		if d, ok := resetTokens(r.a.Header, window); ok {
			ends = append(ends, r.got.Add(d))
		}
	}
	if len(ends) < 2 {
		return 0
	}
	lo := slices.MinFunc(ends, time.Time.Compare)
	hi := slices.MaxFunc(ends, time.Time.Compare)
	return hi.Sub(lo)
}

// p99ms is the nearest-rank 99th percentile of ds in milliseconds: of
// fewer than a hundred calls, the slowest.
func p99ms(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(0.99*float64(len(s)))) - 1
	return math.Round(float64(s[i])/float64(time.Microsecond)) / 1000
}
