// Package llm turns model calls into Azure OpenAI requests that go out
// through the budget: one openai-go client per Azure resource, the SDK's
// own retries off (the budget owns retries and routing), the deployment
// chosen per call by the router.
package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/loopback"
	"github.com/headroom-agent/headroom/internal/redact"
)

// Dispatcher sends chat completions through a budget.Router.
type Dispatcher struct {
	router  *budget.Router
	clients map[string]openai.Client // by resource and API version
	secrets []string                 // the keys it read, to scrub from recordings
	minted  minted                   // stored responses, by the resource that holds them
}

// errZeroDispatcher is what a Dispatcher no constructor made answers.
var errZeroDispatcher = errors.New("llm: this Dispatcher has no router and no deployments: make one with NewDispatcher, or let Open make the Caller")

// Secrets are the API keys the dispatcher holds, for a cassette to scrub.
func (d *Dispatcher) Secrets() []string { return d.secrets }

// DispatcherOptions are the optional parts of a Dispatcher.
type DispatcherOptions struct {
	// HTTPClient is shared by every resource's client; default one with a
	// large idle pool. Its redirect policy is replaced: a redirect from
	// an Azure endpoint is never followed.
	HTTPClient *http.Client
	// Getenv reads the environment variables auth.api_key_env names;
	// default os.Getenv.
	Getenv func(string) string
	// Credential gives the Entra ID tokens of deployments with
	// auth.entra; default azidentity's chain for the environment.
	Credential azcore.TokenCredential
}

// NewDispatcher makes one client per Azure resource (and API version) of
// cfg, with the key from the environment variable each deployment names,
// or Entra ID. Keys are read here, once, and never logged.
func NewDispatcher(router *budget.Router, cfg *budget.Config, o DispatcherOptions) (*Dispatcher, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	httpClient := o.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	httpClient = azureClient(httpClient)
	d := &Dispatcher{router: router, clients: map[string]openai.Client{}}
	entra := defaultEntra(o.Credential)
	for _, dep := range cfg.Deployments {
		key := clientKey(dep)
		if _, ok := d.clients[key]; ok {
			continue
		}
		opts, secret, err := reach(dep, httpClient, getenv, entra)
		if err != nil {
			return nil, fmt.Errorf("deployment %s: %w", dep.Name, err)
		}
		if secret != "" {
			d.secrets = append(d.secrets, secret)
		}
		d.clients[key] = openai.NewClient(opts...)
	}
	return d, nil
}

// secretTokens makes every token a credential hands out a secret value
// (redact.Key) before it is sent, as a key is when it is read.
type secretTokens struct{ azcore.TokenCredential }

func (s secretTokens) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	t, err := s.TokenCredential.GetToken(ctx, o)
	if err == nil {
		redact.Key(t.Token)
	}
	return t, err
}

func clientKey(d budget.Deployment) string { return d.Resource() + "?" + d.APIVersion }

// plainHTTP reports an http endpoint on this machine (the simulator), the
// only place the Azure client allows plain HTTP.
func plainHTTP(endpoint string) bool {
	u, err := url.Parse(endpoint)
	return err == nil && u.Scheme == "http" && loopback.Host(u.Hostname())
}

// Chat sends params (its Model is set per attempt to the chosen
// deployment) as call c, through the router. The report says where it was
// served, what the answering attempt reserved, and the retries and 429s on
// the way; the call's type and cap are the caller's to fill in.
//
// An answer that is not a chat completion, or larger than one capped as
// params are can be, is an *EndpointError; the answer is read no further
// than that bound.
func (d *Dispatcher) Chat(ctx context.Context, c budget.Call, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, Report, error) {
	if d.router == nil {
		return nil, Report{}, errZeroDispatcher
	}
	var res *openai.ChatCompletion
	maxTokens := cmp.Or(params.MaxCompletionTokens.Value, params.MaxTokens.Value)
	bound := answerBound(maxTokens, max(1, params.N.Value))
	_, r, err := d.do(ctx, c, bound, func(ctx context.Context, client *openai.Client, model string, opts ...option.RequestOption) (int64, error) {
		p := params
		p.Model = model
		out, err := client.Chat.Completions.New(ctx, p, opts...)
		if err == nil && (out == nil || len(out.Choices) == 0) {
			err = errNoCompletion
		}
		if err != nil {
			return 0, err
		}
		res = out
		return out.Usage.TotalTokens, nil
	})
	if res != nil {
		r.PromptTokens = res.Usage.PromptTokens
		r.CachedTokens = res.Usage.PromptTokensDetails.CachedTokens
		r.TokensUsed = res.Usage.TotalTokens
		r.ServiceTier = string(res.ServiceTier)
	}
	if err != nil {
		return nil, r, err
	}
	return res, r, nil
}

// attempt sends one request to model with client and the request options
// given, and returns the tokens its answer says it used.
type attempt func(ctx context.Context, client *openai.Client, model string, opts ...option.RequestOption) (int64, error)

// do places c through the router, sending each attempt with send on the
// chosen deployment's client, its answer read no further than bound
// bytes, and reports where it was served. A 401 or 403 says where the
// credential came from; an answer that is not the API's, what it was.
func (d *Dispatcher) do(ctx context.Context, c budget.Call, bound int64, send attempt) (*budget.Lease, Report, error) {
	start := time.Now()
	var r Report
	sent := 0
	_, lease, err := d.router.Do(ctx, c, func(ctx context.Context, l *budget.Lease) budget.Outcome {
		if sent++; sent > 1 {
			r.Retries++
		}
		client, ok := d.clients[clientKey(*l.Deployment)]
		if !ok {
			return budget.Outcome{Err: fmt.Errorf("no client for %s", l.Deployment.Name)}
		}
		// A call past the lease's send-by is not sent: the fleet's pacing
		// assumed it would arrive sooner. It is checked here, before the
		// request is built, and again by the gate, the moment before the
		// transport takes it; a request cannot be taken back after that.
		gate := &sendGate{by: l.SendBy()}
		late := func(at time.Time) budget.Outcome {
			// Reserved again, not retried: it never left.
			if sent--; sent > 0 {
				r.Retries--
			}
			return budget.Outcome{Late: true, LateAt: at}
		}
		if gate.hold() {
			return late(gate.heldAt())
		}
		var raw *http.Response
		// The transport reports the write from its own goroutine.
		var wrote atomic.Int64
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Now().UnixNano()) }}
		w := &answerWatch{limit: bound}
		opts := []option.RequestOption{option.WithResponseInto(&raw), option.WithMiddleware(w.middleware), option.WithMiddleware(gate.middleware)}
		if key := cacheKey(c.Session, l.Deployment.APIVersion); key != "" {
			opts = append(opts, option.WithJSONSet("prompt_cache_key", key))
		}
		used, err := send(httptrace.WithClientTrace(ctx, trace), &client, l.Deployment.Deployment, opts...)
		if at := gate.heldAt(); !at.IsZero() {
			return late(at) // built, and late by the time it could leave
		}
		o := outcome(raw, w.check(ctx, l.Deployment, raw, err))
		o.UsedTokens = max(0, used) // an answer's usage cannot give room back
		if w := wrote.Load(); w > 0 {
			o.Wrote = time.Unix(0, w)
		}
		r.SentAt = o.Wrote
		if o.Status == http.StatusTooManyRequests {
			r.RateLimited++
		}
		return o
	})
	r.LatencyMS = time.Since(start).Milliseconds()
	if lease != nil {
		r.Deployment, r.TokensReserved = lease.Deployment.Name, lease.Reservation.Tokens
		r.AdmittedAt, r.SendBy = lease.Reservation.At, lease.SendBy()
		r.StoreWritesFailed = lease.WritesFailed()
	}
	var ce *budget.CallError
	var ae *openai.Error
	if errors.As(err, &ce) && ce.Status == http.StatusBadRequest && errors.As(err, &ae) && ae.Message != "" {
		// What Azure says of a bad request is what the user must fix.
		msg := ae.Message
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		if ae.Param != "" {
			msg = ae.Param + ": " + msg
		}
		err = fmt.Errorf("%w: %s", err, msg)
	}
	if errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden) && lease != nil {
		where := "its Entra ID credential"
		if env := lease.Deployment.Auth.APIKeyEnv; env != "" {
			where = "the key in $" + env
		}
		err = fmt.Errorf("%w: %s refused %s", err, lease.Deployment.Name, where)
	}
	var ee *EndpointError
	if errors.As(err, &ee) && errors.As(err, &ce) && ce.Status != 0 {
		// The call error says the status; what came with it is the news.
		err = fmt.Errorf("%w: %s", err, ee.Error())
	}
	// An error body may echo the request, its key included.
	return lease, r, redact.Error(err)
}

// sendGate checks a lease's send-by as late as a request allows: as the
// last middleware, before the transport takes the request, and again as
// the transport reads the request's body, after it holds a connection (a
// starved process may take long to dial) and before the body leaves. The
// headers may have gone ahead (net/http sends them first for a body it
// cannot see into), but a request whose body never comes is one no server
// can price, count or serve. A request cannot be taken back once it has
// left whole.
type sendGate struct {
	by   time.Time    // zero: no bound
	late atomic.Int64 // when the request was held back, in Unix ns; set from the transport's goroutine
}

// errLate is what the gate answers for a request it held back.
var errLate = errors.New("llm: not sent: the lease's send-by passed before the request left")

// hold reports whether the send-by has passed, and if so records when.
func (g *sendGate) hold() bool {
	now := time.Now()
	if g.by.IsZero() || !now.After(g.by) {
		return false
	}
	g.late.CompareAndSwap(0, now.UnixNano())
	return true
}

// heldAt is when the gate held the request back; zero if it did not.
func (g *sendGate) heldAt() time.Time {
	if ns := g.late.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

func (g *sendGate) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if g.hold() {
		return nil, errLate
	}
	if g.by.IsZero() || req.Body == nil {
		return next(req)
	}
	req.Body = &gatedBody{ReadCloser: req.Body, gate: g}
	if get := req.GetBody; get != nil {
		// The transport sends a request again on a fresh connection when a
		// kept-alive one died before any of it was written; the body it
		// rewinds to is checked the same way.
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := get()
			if err != nil || b == nil {
				return b, err
			}
			return &gatedBody{ReadCloser: b, gate: g}, nil
		}
	}
	return next(req)
}

// gatedBody is a request body that fails its first read once the gate's
// send-by has passed; the transport then closes the connection with none
// of the body written.
type gatedBody struct {
	io.ReadCloser
	gate    *sendGate
	checked bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.checked {
		b.checked = true
		if b.gate.hold() {
			return 0, errLate
		}
	}
	return b.ReadCloser.Read(p)
}

// outcome reads an attempt's status and headers from the raw response or
// the SDK's error, whichever there is.
func outcome(raw *http.Response, err error) budget.Outcome {
	o := budget.Outcome{Sent: true, Err: err}
	var apierr *openai.Error
	switch {
	case raw != nil:
		o.Status, o.Header = raw.StatusCode, raw.Header
	case errors.As(err, &apierr) && apierr.Response != nil:
		o.Status, o.Header = apierr.StatusCode, apierr.Response.Header
	}
	return o
}

// Router is the router the dispatcher places calls through, for its
// metrics.
func (d *Dispatcher) Router() *budget.Router { return d.router }
