package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/redact"
)

// ProbeResult is what one tiny chat completion to a deployment saw.
type ProbeResult struct {
	// Status is the HTTP status of the answer.
	Status int
	// Header holds the answer's rate-limit headers (x-ratelimit-* and the
	// hyphenated spelling) and nothing else.
	Header http.Header
	// Model is the answer's model field: Azure names the model and its
	// version there, as gpt-4o-2024-11-20. Empty when the call failed.
	Model string
	// Code and Message are Azure's error for a status other than 2xx,
	// the message cut to a few hundred characters.
	Code, Message string
	Latency       time.Duration
}

// ProbeOptions are the optional parts of Probe.
type ProbeOptions struct {
	// HTTPClient sends the request; default a fresh one. Its redirect
	// policy is replaced: a redirect from an Azure endpoint is never
	// followed.
	HTTPClient *http.Client
	// Getenv reads the variable auth.api_key_env names; default os.Getenv.
	Getenv func(string) string
	// Timeout bounds a probe whose context has no deadline; 0 is
	// DefaultProbeTimeout.
	Timeout time.Duration
	// Credential gives the Entra ID token of a deployment with
	// auth.entra; default azidentity's chain for the environment.
	Credential azcore.TokenCredential
}

// DefaultProbeTimeout bounds a probe given no deadline: a deployment that
// has not answered a one-token call by then is not answering.
const DefaultProbeTimeout = 20 * time.Second

// Probe sends one chat completion to d that costs as little as Azure
// allows (a one-word prompt, a cap of one token, n 1, the lowest
// reasoning effort on a reasoning model) and reports the answer's status,
// rate-limit headers and model. It goes around the budget: it is for
// checking a config before a fleet uses it, when one call a deployment
// is noise. The error is for no answer at all (no key, no route, a
// timeout); an HTTP error status is a result. Neither ever holds the key.
func Probe(ctx context.Context, d budget.Deployment, o ProbeOptions) (ProbeResult, error) {
	a, err := probeChat(ctx, d, "ping", nil, 1, o)
	return ProbeResult{Status: a.status, Header: a.header, Model: a.model, Code: a.code, Message: a.message, Latency: a.latency}, err
}

// probeShape writes the probe's request as a call's is written, for the
// deployment's model family; a model the table does not know is written
// as a chat model.
func probeShape(d budget.Deployment) Shape {
	info, err := models.Resolve(d.Model, d.Family)
	if err != nil {
		return Shape{}
	}
	return Shape{Model: info}
}

// probeType is the probe as a call type: no schema, temperature 0 and,
// on a reasoning model, the lowest effort the model takes (the table
// lists it first), so a cap of one token is spent as cheaply as it can be
// and still answers 200.
func probeType(d budget.Deployment) calltypes.Type {
	t := calltypes.Type{Name: "probe", ReasoningEffort: "minimal"}
	if s := probeShape(d); len(s.Model.Efforts) > 0 {
		t.ReasoningEffort = s.Model.Efforts[0]
	}
	return t
}

// answer is what one probing chat completion got back.
type answer struct {
	status        int
	header        http.Header
	model         string
	code, message string
	usage         openai.CompletionUsage
	lag, latency  time.Duration
}

// probeChat sends one chat completion of prompt, capped at maxTokens, to
// d, around the budget and with no retry (a retry would hide what the
// first answer said, and charge again). The key is read as the dispatcher
// reads it and scrubbed from every error; an HTTP error status is an
// answer, the error is for none.
func probeChat(ctx context.Context, d budget.Deployment, prompt string, images []calltypes.Image, maxTokens int64, o ProbeOptions) (answer, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, positiveOr(o.Timeout, DefaultProbeTimeout))
		defer cancel()
	}
	opts, _, err := reach(d, azureClient(o.HTTPClient), getenv, defaultEntra(o.Credential))
	if err != nil {
		return answer{}, err
	}
	// reach registered the key, and the credential every Entra token it
	// hands out, as secrets: whole or in pieces, whatever the answer
	// echoes of them is hidden.
	scrub := redact.Text
	p := openai.ChatCompletionNewParams{
		Model:    d.Deployment,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		N:        openai.Int(1),
	}
	if len(images) > 0 {
		p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(withImages(prompt, images))}
	}
	probeShape(d).apply(&p, probeType(d), maxTokens)

	// The trace's callbacks run on the transport's goroutines. An Entra
	// token fetched on the same context fires them too; the last
	// connection and the last first byte are the completion's.
	var mu sync.Mutex
	var wrote, first time.Time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { mu.Lock(); wrote = time.Now(); mu.Unlock() },
		GotFirstResponseByte: func() { mu.Lock(); first = time.Now(); mu.Unlock() },
	})
	client := openai.NewClient(opts...)
	start := time.Now()
	var raw *http.Response
	w := &answerWatch{limit: answerBound(maxTokens, 1)}
	res, err := client.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw), option.WithMiddleware(w.middleware))
	if err == nil && (res == nil || len(res.Choices) == 0) {
		err = errNoCompletion
	}
	err = w.check(ctx, &d, raw, err)
	a := answer{latency: time.Since(start)}
	mu.Lock()
	if !wrote.IsZero() && first.After(wrote) {
		a.lag = first.Sub(wrote)
	}
	mu.Unlock()
	var apierr *openai.Error
	var ee *EndpointError
	switch {
	case errors.As(err, &ee):
		// An answer, but not the API's: a redirect, a proxy's page, a
		// body past its bound.
		a.status = ee.Status
		if raw != nil {
			a.header = rateHeaders(raw.Header, scrub)
		}
		ee.What = scrub(ee.What)
		return a, redact.Error(ee)
	case errors.As(err, &apierr):
		a.status, a.code, a.message = apierr.StatusCode, scrub(apierr.Code), scrub(cut(apierr.Message, 300))
		if apierr.Response != nil {
			a.header = rateHeaders(apierr.Response.Header, scrub)
		}
		return a, nil
	case err != nil && ctx.Err() != nil:
		if raw != nil {
			a.status, a.header = raw.StatusCode, rateHeaders(raw.Header, scrub)
		}
		return a, redact.Error(fmt.Errorf("%s (%s) gave no whole answer before the probe's deadline: %s", d.Name, endpointHost(&d), scrub(err.Error())))
	case err != nil && raw != nil:
		a.status, a.header = raw.StatusCode, rateHeaders(raw.Header, scrub)
		return a, redact.Error(fmt.Errorf("the answer (HTTP %d) is not a chat completion: %s", raw.StatusCode, scrub(err.Error())))
	case err != nil:
		return a, redact.Error(errors.New(scrub(err.Error())))
	}
	a.model, a.usage = res.Model, res.Usage
	if raw != nil {
		a.status, a.header = raw.StatusCode, rateHeaders(raw.Header, scrub)
	}
	return a, nil
}

// rateHeaders keeps the rate-limit headers of h, each value scrubbed:
// the rest of an answer is no business of a probe's caller.
func rateHeaders(h http.Header, scrub func(string) string) http.Header {
	out := http.Header{}
	for k, vs := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ratelimit-") || strings.HasPrefix(lk, "x-rate-limit-") {
			for _, v := range vs {
				out[k] = append(out[k], scrub(v))
			}
		}
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
