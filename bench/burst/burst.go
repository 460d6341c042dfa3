// Package burst measures what client-side strategies do with a burst:
// n chat completions that arrive at the same instant at one Azure OpenAI
// deployment, each allowed a few attempts. It runs against any
// Azure-compatible endpoint or an in-process simulator, and reports per
// strategy how many requests completed, how many 429s they drew and how
// long they took.
package burst

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// Target is the deployment a burst is sent to.
type Target struct {
	Endpoint   string // Azure OpenAI resource base URL, e.g. http://127.0.0.1:PORT
	Deployment string
	APIKey     string // sent as the api-key header; never printed
	APIVersion string // default budget.DefaultAPIVersion
	RPM        int    // the deployment's request limit, for pacing (E) and the floor
	// Minute is the length of the endpoint's rate-limit minute: one minute
	// for Azure (the default), shorter for a compressed simulator. Client
	// pacing, backoff and the floor scale with it, so a compressed run
	// keeps the proportions of a real one.
	Minute time.Duration
	// Client defaults to one with a 60 s timeout and enough idle
	// connections for 90 concurrent calls.
	Client *http.Client
}

// String names the target without its key, so printing one is safe.
func (t Target) String() string {
	return fmt.Sprintf("%s at %s (%d RPM)", t.Deployment, t.Endpoint, t.RPM)
}

func (t Target) minute() time.Duration { return cmp.Or(t.Minute, time.Minute) }

// scaled is d of real time in t's minute.
func (t Target) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * float64(t.minute()) / float64(time.Minute))
}

// Send is one attempt of one request; status is the HTTP status (0 for a
// transport error), header the response headers.
type Send func(ctx context.Context) (status int, header http.Header, err error)

// Strategy runs n requests, each at most maxAttempts times, and reports.
type Strategy struct {
	Name string // "A".."E", "headroom"
	Desc string // e.g. "fire-and-forget, exponential backoff"
	Run  func(ctx context.Context, t Target, n, maxAttempts int) Row
}

// Row is one strategy's result. Times are in seconds of real time.
type Row struct {
	Strategy    string `json:"strategy"`
	Completed   int    `json:"completed"`
	GaveUp      int    `json:"gave_up"`
	RateLimited int    `json:"rate_limited"` // 429 answers seen
	Attempts    int    `json:"attempts"`
	// P50S and P99S are latencies of completed requests, from the common
	// start to their success.
	P50S  float64 `json:"p50_s"`
	P99S  float64 `json:"p99_s"`
	WallS float64 `json:"wall_s"`
	// EffectiveRPM is completed requests per minute of wall time (per the
	// Target's Minute when it is compressed).
	EffectiveRPM float64 `json:"effective_rpm"`
	// FloorS is the least time the quota allows for n requests: n ÷ RPM
	// minutes.
	FloorS float64 `json:"floor_s"`
}

// Baselines are the strategies clients commonly use, A to E.
func Baselines() []Strategy {
	return []Strategy{
		policy{backoff: exponential}.strategy("A", "fire-and-forget, exponential backoff with jitter"),
		policy{backoff: serverSays}.strategy("B", "fire-and-forget, sleeps Retry-After"),
		policy{inFlight: 4, backoff: serverSays}.strategy("C", "4 in flight, sleeps Retry-After"),
		policy{inFlight: 1, backoff: serverSays}.strategy("D", "1 in flight, sleeps Retry-After"),
		policy{inFlight: 4, pace: true, backoff: serverSays}.strategy("E", "paced at the quota, 4 in flight, sleeps Retry-After"),
	}
}

// policy is what the baselines differ in.
type policy struct {
	inFlight int  // 0: no limit
	pace     bool // one attempt every minute ÷ RPM
	// backoff is the sleep after failed attempt a (0-based).
	backoff func(t Target, a int, h http.Header) time.Duration
}

// exponential ignores the server: 200 ms × 2^a plus up to 100 ms.
func exponential(t Target, a int, _ http.Header) time.Duration {
	d := 200*time.Millisecond<<min(a, 20) + rand.N(100*time.Millisecond)
	return t.scaled(d)
}

// serverSays sleeps what the last answer asked for, or 1 s without one.
func serverSays(t Target, _ int, h http.Header) time.Duration {
	if d := budget.RetryAfter(h, time.Now()); d > 0 {
		return d
	}
	return t.scaled(time.Second)
}

func (p policy) strategy(name, desc string) Strategy {
	run := func(ctx context.Context, t Target, n, maxAttempts int) Row {
		var sem chan struct{}
		if p.inFlight > 0 {
			sem = make(chan struct{}, p.inFlight)
		}
		var pc *pacer
		if p.pace {
			pc = &pacer{every: t.minute() / time.Duration(max(1, t.RPM))}
		}
		// once is one attempt through the semaphore and the pacer; sleeps
		// between attempts happen outside both.
		once := func(ctx context.Context, attempt Send) (int, http.Header, error) {
			if sem != nil {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return 0, nil, ctx.Err()
				}
				defer func() { <-sem }()
			}
			if pc != nil {
				if err := pc.wait(ctx); err != nil {
					return 0, nil, err
				}
			}
			return attempt(ctx)
		}
		return Measure(ctx, name, t, n, func(ctx context.Context, _ int, attempt Send) bool {
			for a := range maxAttempts {
				status, h, err := once(ctx, attempt)
				if succeeded(status, err) {
					return true
				}
				retry := budget.Outcome{Sent: true, Status: status, Header: h, Err: err}.Retryable()
				if !retry || ctx.Err() != nil || a == maxAttempts-1 {
					return false
				}
				if !sleep(ctx, p.backoff(t, a, h)) {
					return false
				}
			}
			return false
		})
	}
	return Strategy{Name: name, Desc: desc, Run: run}
}

// pacer hands out send times every so often: a shared next slot that each
// attempt takes and waits for.
type pacer struct {
	every time.Duration
	mu    sync.Mutex
	next  time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	for range 3 {
		p.mu.Lock()
		slot := time.Now()
		if p.next.After(slot) {
			slot = p.next
		}
		p.next = slot.Add(p.every)
		p.mu.Unlock()
		if !sleep(ctx, time.Until(slot)) {
			return ctx.Err()
		}
		// Waking well past the slot means the process stalled (GC, a busy
		// machine) and the holders of the next slots woke with it; sending
		// now would bunch with them, so take a fresh slot instead.
		if time.Since(slot) < p.every/2 {
			return nil
		}
	}
	return nil
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func succeeded(status int, err error) bool { return err == nil && status >= 200 && status < 300 }

// Measure sends n requests to t, all released at the same instant, and
// reports them as name's Row. one carries request i to its end: it calls
// attempt for every try (attempt sends a chat completion and counts it) and
// returns whether the request completed. The baselines are built on it;
// another strategy can be too, so that every row counts the same way.
func Measure(ctx context.Context, name string, t Target, n int, one func(ctx context.Context, i int, attempt Send) bool) Row {
	send := ChatSend(t)
	var attempts, limited atomic.Int64
	attempt := func(ctx context.Context) (int, http.Header, error) {
		attempts.Add(1)
		status, h, err := send(ctx)
		if status == http.StatusTooManyRequests {
			limited.Add(1)
		}
		return status, h, err
	}
	latency := make([]time.Duration, n)
	ok := make([]bool, n)
	var ready, wg sync.WaitGroup
	gate := make(chan struct{})
	var start time.Time
	ready.Add(n)
	for i := range n {
		wg.Go(func() {
			ready.Done()
			<-gate
			if one(ctx, i, attempt) {
				ok[i] = true
				latency[i] = time.Since(start)
			}
		})
	}
	// The barrier: every request is waiting before the clock starts.
	ready.Wait()
	start = time.Now()
	close(gate)
	wg.Wait()
	wall := time.Since(start)

	row := Row{
		Strategy:    name,
		RateLimited: int(limited.Load()),
		Attempts:    int(attempts.Load()),
		WallS:       seconds(wall),
		FloorS:      seconds(time.Duration(float64(n) / float64(max(1, t.RPM)) * float64(t.minute()))),
	}
	var done []time.Duration
	for i := range n {
		if ok[i] {
			done = append(done, latency[i])
		}
	}
	row.Completed, row.GaveUp = len(done), n-len(done)
	if len(done) > 0 {
		slices.Sort(done)
		row.P50S = seconds(percentile(done, 0.50))
		row.P99S = seconds(percentile(done, 0.99))
	}
	if wall > 0 {
		row.EffectiveRPM = math.Round(float64(row.Completed)/wall.Seconds()*t.minute().Seconds()*10) / 10
	}
	return row
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// chatBody is the same small completion for every request.
// The burst's request: a short prompt with a small answer cap.
const (
	chatPrompt    = "Summarise the page in one line."
	chatMaxTokens = 16
)

var chatBody = fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"max_tokens":%d,"n":1}`, chatPrompt, chatMaxTokens)

// ChatSend sends one chat completion to t's deployment and discards the
// answer.
func ChatSend(t Target) Send {
	u := strings.TrimRight(t.Endpoint, "/") + "/openai/deployments/" + url.PathEscape(t.Deployment) +
		"/chat/completions?api-version=" + url.QueryEscape(cmp.Or(t.APIVersion, budget.DefaultAPIVersion))
	client := t.Client
	if client == nil {
		client = NewClient()
	}
	return func(ctx context.Context) (int, http.Header, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(chatBody))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("api-key", t.APIKey)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		// Reading to the end lets the connection be reused.
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return resp.StatusCode, resp.Header, err
		}
		return resp.StatusCode, resp.Header, nil
	}
}

// NewClient is the default client: a 60 s timeout and enough idle
// connections that 90 concurrent calls do not redial on every retry.
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 256
	return &http.Client{Timeout: 60 * time.Second, Transport: tr}
}

// Simulated starts an in-process Azure OpenAI simulator on a loopback port
// with one deployment, "gpt-4o", of 10,000 TPM (60 RPM by quota units) that
// answers 8 tokens in 600 ms ± 50%, with the given window (one minute
// normally). A shorter window compresses time: the request windows and the
// service time shrink with it. stop shuts the simulator down; start one per
// strategy so that each begins with fresh windows.
func Simulated(ctx context.Context, window time.Duration) (Target, func(), error) {
	window = cmp.Or(window, time.Minute)
	t := Target{Deployment: "gpt-4o", APIKey: "bench-burst", APIVersion: budget.DefaultAPIVersion, RPM: 60, Minute: window}
	sim, err := azuresim.New(azuresim.Config{
		Window: window,
		Faults: azuresim.Faults{Latency: t.scaled(600 * time.Millisecond), Jitter: 0.5},
		Deployments: []azuresim.Deployment{{
			Name: "gpt-4o", Model: "gpt-4o", TPM: 10000, Reply: "fixed", OutputTokens: 8,
		}},
	}, azuresim.Options{})
	if err != nil {
		return Target{}, nil, fmt.Errorf("simulator: %w", err)
	}
	srv, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return Target{}, nil, fmt.Errorf("simulator: %w", err)
	}
	t.Endpoint = srv.URL
	t.Client = NewClient()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			t.Client.CloseIdleConnections()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(shut)
		})
	}
	context.AfterFunc(ctx, stop)
	return t, stop, nil
}

// Print writes rows as a table, then the floor the quota sets.
func Print(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "strategy\tcompleted\tgave up\t429s\tattempts\tp50\tp99\twall\teffective RPM\t\n")
	for _, r := range rows {
		p50, p99 := "-", "-"
		if r.Completed > 0 {
			p50, p99 = fmt.Sprintf("%.1f s", r.P50S), fmt.Sprintf("%.1f s", r.P99S)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\t%s\t%s\t%.1f s\t%.1f\t\n",
			r.Strategy, r.Completed, r.Completed+r.GaveUp, r.GaveUp, r.RateLimited, r.Attempts, p50, p99, r.WallS, r.EffectiveRPM)
	}
	tw.Flush()
	if len(rows) == 0 {
		return
	}
	same := true
	for _, r := range rows {
		same = same && r.FloorS == rows[0].FloorS && r.Completed+r.GaveUp == rows[0].Completed+rows[0].GaveUp
	}
	if same {
		fmt.Fprintf(w, "floor: %d requests at the quota take %.1f s\n", rows[0].Completed+rows[0].GaveUp, rows[0].FloorS)
		return
	}
	for _, r := range rows {
		fmt.Fprintf(w, "floor of %s: %d requests at the quota take %.1f s\n", r.Strategy, r.Completed+r.GaveUp, r.FloorS)
	}
}
