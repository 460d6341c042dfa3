package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// fixture is a simulator with the given deployments and a router over
// them with an in-memory store.
type fixture struct {
	sim    *azuresim.Sim
	url    string
	router *budget.Router
	disp   *Dispatcher
}

func newFixture(t *testing.T, simCfg azuresim.Config, yaml string) *fixture {
	t.Helper()
	sim, err := azuresim.New(simCfg, azuresim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	t.Setenv("SIM_KEY", "test-key")
	cfg, _, err := parseConfig("headroom.yaml", []byte(strings.ReplaceAll(yaml, "ENDPOINT", ts.URL)))
	if err != nil {
		t.Fatal(err)
	}
	store := budget.NewMemStore(budget.MemOptions{Window: cfg.Window, Policy: cfg.Refund})
	router, err := budget.NewRouter(store, cfg, budget.RouterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	disp, err := NewDispatcher(router, cfg, DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{sim: sim, url: ts.URL, router: router, disp: disp}
}

func deployments(names ...string) string {
	var b strings.Builder
	b.WriteString("deployments:\n")
	for _, n := range names {
		parts := strings.Split(n, ":")
		fmt.Fprintf(&b, "  - {name: %s, endpoint: ENDPOINT, model: gpt-4o, tpm: %s, auth: {api_key_env: SIM_KEY}}\n", parts[0], parts[1])
	}
	return b.String()
}

func chat(text string, maxTokens int64) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
		MaxTokens: openai.Int(maxTokens),
		N:         openai.Int(1),
	}
}

func TestChatGoesThroughTheBudget(t *testing.T) {
	f := newFixture(t, azuresim.Config{Deployments: []azuresim.Deployment{{Name: "a", TPM: 60000}}}, deployments("a:60000"))
	began := time.Now()
	res, r, err := f.disp.Chat(context.Background(), budget.Call{Tokens: 100}, chat("click #37", 40))
	if err != nil {
		t.Fatal(err)
	}
	if r.AdmittedAt.Before(began) || r.SentAt.Before(r.AdmittedAt) || r.SentAt.After(time.Now()) {
		t.Errorf("admitted at %v, sent at %v: want in that order within the call (%v on)", r.AdmittedAt, r.SentAt, began)
	}
	if res.Choices[0].Message.Content != "click #37" || r.Deployment != "a" || r.TokensReserved != 100 {
		t.Errorf("answer %q on %s, reserved %d", res.Choices[0].Message.Content, r.Deployment, r.TokensReserved)
	}
	m := f.router.Metrics()
	if m.Completed != 1 || m.ByDeployment["a"] != 1 {
		t.Errorf("metrics %+v", m)
	}
}

func TestA429MovesToAnotherDeploymentAtOnce(t *testing.T) {
	// b's server-side limit is far below what the config believes, so the
	// first call placed there is refused by the server.
	f := newFixture(t, azuresim.Config{Deployments: []azuresim.Deployment{{Name: "a", TPM: 60000}, {Name: "b", TPM: 1000}}},
		deployments("a:60000", "b:60000"))
	// Route the call to b first: take a's headroom away in the store.
	for i := 0; i < 5; i++ {
		if _, _, err := f.disp.Chat(context.Background(), budget.Call{Tokens: 2000}, chat("x", 1500)); err != nil {
			t.Fatal(err)
		}
	}
	m := f.router.Metrics()
	// b's limit header (1,000) is below the configured 60,000: the 429 is
	// an adjustment, and the effective limit is fed back.
	if m.Completed != 5 || m.RateLimited[budget.CauseAdjustment] != 1 || m.EffectiveLimits == 0 || m.ByDeployment["a"] != 5 {
		t.Errorf("metrics %+v: want 5 completed on a after b refused", m)
	}
	if st := f.sim.Stats(); st.Deployments[1].RateLimited.Tokens == 0 {
		t.Errorf("b never refused: %+v", st.Deployments[1])
	}
}

func TestOther4xxIsNotRetried(t *testing.T) {
	f := newFixture(t, azuresim.Config{Deployments: []azuresim.Deployment{{Name: "a", TPM: 60000}, {Name: "b", TPM: 60000}}},
		deployments("a:60000", "b:60000"))
	bad := chat("x", 10)
	bad.N = openai.Int(500) // out of range: 400
	_, _, err := f.disp.Chat(context.Background(), budget.Call{Tokens: 100}, bad)
	var ce *budget.CallError
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Attempts != 1 {
		t.Fatalf("a 400: %v", err)
	}
	st := f.sim.Stats()
	if st.Deployments[0].Accepted+st.Deployments[1].Accepted != 0 {
		t.Errorf("a 400 reached the server's admission: %+v", st)
	}
}

func TestShedWhenNoRoomBeforeTheDeadline(t *testing.T) {
	// An hour's window: 10,000 × 0.85 = 8,500 an hour, and the second call
	// must wait for the next, which a deadline of seconds almost never
	// reaches.
	f := newFixture(t, azuresim.Config{Deployments: []azuresim.Deployment{{Name: "a", TPM: 60000}}}, "window: 1h\n"+deployments("a:10000"))
	if _, _, err := f.disp.Chat(context.Background(), budget.Call{Tokens: 8000}, chat("x", 10)); err != nil {
		t.Fatal(err)
	}
	// A call that waited for the deadline would take seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := f.disp.Chat(ctx, budget.Call{Tokens: 8000}, chat("x", 10))
	if !errors.Is(err, budget.ErrShed) {
		t.Fatalf("no room before the deadline: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("shedding took %v: it should not wait for a deadline it cannot meet", time.Since(start))
	}
	if m := f.router.Metrics(); m.Shed != 1 {
		t.Errorf("shed counter %d", m.Shed)
	}
	if st := f.sim.Stats(); st.Deployments[0].RateLimited.Total() != 0 {
		t.Errorf("a call was sent to be refused: %+v", st.Deployments[0])
	}
}

func TestAWrongKeySaysWhereTheKeyCameFrom(t *testing.T) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{Name: "a", TPM: 60000}}}, azuresim.Options{APIKeys: []string{"right"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	defer ts.Close()
	cfg, _, err := parseConfig("headroom.yaml", []byte("deployments:\n  - {name: a, endpoint: "+ts.URL+", tpm: 60000, auth: {api_key_env: MY_KEY}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	router, _ := budget.NewRouter(budget.NewMemStore(budget.MemOptions{}), cfg, budget.RouterOptions{})
	disp, err := NewDispatcher(router, cfg, DispatcherOptions{Getenv: func(string) string { return "wrong" }})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = disp.Chat(context.Background(), budget.Call{Tokens: 10}, chat("x", 5))
	if err == nil || !strings.Contains(err.Error(), "$MY_KEY") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("a 401: %v", err)
	}
}

func TestRespondPinsToTheResourceThatMintedTheResponse(t *testing.T) {
	simCfg, err := azuresim.ParseConfig("sim.yaml", []byte(`
resources:
  - {name: res-a, path_prefix: /a, deployments: [{name: gpt41, model: gpt-4.1, tpm: 1000000}]}
  - {name: res-b, path_prefix: /b, deployments: [{name: gpt41, model: gpt-4.1, tpm: 1000000}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	sim, err := azuresim.New(simCfg, azuresim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	defer ts.Close()
	cfg, _, err := parseConfig("headroom.yaml", []byte(fmt.Sprintf(`
deployments:
  - {name: a, endpoint: %s/a, deployment: gpt41, model: gpt-4.1, tpm: 1000000, auth: {api_key_env: K}}
  - {name: b, endpoint: %s/b, deployment: gpt41, model: gpt-4.1, tpm: 1000000, auth: {api_key_env: K}}
`, ts.URL, ts.URL)))
	if err != nil {
		t.Fatal(err)
	}
	router, _ := budget.NewRouter(budget.NewMemStore(budget.MemOptions{}), cfg, budget.RouterOptions{})
	disp, err := NewDispatcher(router, cfg, DispatcherOptions{Getenv: func(string) string { return "k" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turn := func(prev string) (*responses.Response, Report, error) {
		p := responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("next step")}}
		if prev != "" {
			p.PreviousResponseID = openai.String(prev)
		}
		return disp.Respond(ctx, budget.Call{Tokens: 100}, p)
	}
	first, r, err := turn("")
	if err != nil {
		t.Fatal(err)
	}
	prev := first.ID
	for range 10 {
		res, r2, err := turn(prev)
		if err != nil {
			t.Fatalf("a later turn: %v", err)
		}
		if r2.Deployment != r.Deployment {
			t.Fatalf("turn went to %s, the conversation lives on %s", r2.Deployment, r.Deployment)
		}
		prev = res.ID
	}
	_, _, err = turn("resp_unknown")
	if !errors.Is(err, budget.ErrPinned) {
		t.Fatalf("an id of unknown origin: %v", err)
	}
	for _, st := range sim.Stats().Deployments {
		if st.RateLimited.Total() != 0 {
			t.Errorf("%+v", st)
		}
	}
}

// TestSendGateHoldsBackARequestDialledLate: a request whose send-by
// passes while its process dials the connection never reaches the server
// whole; one whose send-by is still ahead once connected does. Real
// transport, real server: what the server received is the test, and a
// request counts once its body has arrived, as a server that prices a
// call by its body counts it.
func TestSendGateHoldsBackARequestDialledLate(t *testing.T) {
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err == nil && int64(len(b)) == r.ContentLength {
			arrived.Add(1)
		}
	}))
	defer srv.Close()
	const dial = 50 * time.Millisecond
	// Each request dials: none keeps a connection for the next.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dial) // a process not scheduled while it connects
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	for _, c := range []struct {
		name string
		by   time.Duration // from the request, ahead of the dial or inside it
		sent bool
	}{
		{"send-by after the dial", time.Minute, true},
		{"send-by during the dial", dial / 5, false},
	} {
		before := arrived.Load()
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		g := &sendGate{by: time.Now().Add(c.by)}
		resp, err := g.middleware(req, client.Do)
		if resp != nil {
			resp.Body.Close()
		}
		got := arrived.Load() - before
		if (got == 1) != c.sent || (err == nil) != c.sent || g.heldAt().IsZero() == !c.sent {
			t.Errorf("%s: the server saw %d requests, err %v, held back at %v", c.name, got, err, g.heldAt())
		}
		if !c.sent && !errors.Is(err, errLate) {
			t.Errorf("%s: err %v, want errLate", c.name, err)
		}
	}
}

// TestSendGateHoldsBackALateRequest: the last middleware passes a request
// whose lease has no send-by or one still ahead, and holds back one whose
// send-by has passed, without handing it to the transport.
func TestSendGateHoldsBackALateRequest(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "https://a.openai.azure.com/", nil)
	for _, c := range []struct {
		name string
		by   time.Time
		sent bool
	}{
		{"no send-by", time.Time{}, true},
		{"send-by ahead", time.Now().Add(time.Minute), true},
		{"send-by passed", time.Now().Add(-time.Millisecond), false},
	} {
		g := &sendGate{by: c.by}
		sent := false
		_, err := g.middleware(req, func(*http.Request) (*http.Response, error) { sent = true; return &http.Response{StatusCode: 200}, nil })
		heldBack := !g.heldAt().IsZero()
		if sent != c.sent || (err == nil) != c.sent || heldBack == c.sent {
			t.Errorf("%s: handed to the transport %v, err %v, held back at %v", c.name, sent, err, g.heldAt())
		}
	}
}
