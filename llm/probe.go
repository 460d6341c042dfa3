package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/budget"
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
	// HTTPClient sends the request; default a fresh one.
	HTTPClient *http.Client
	// Getenv reads the variable auth.api_key_env names; default os.Getenv.
	Getenv func(string) string
}

// Probe sends one chat completion to d that costs as little as Azure
// allows (a one-word prompt, a cap of one token, n 1, the lowest
// reasoning effort on a reasoning model) and reports the answer's status,
// rate-limit headers and model. It goes around the budget: it is for
// checking a config before a fleet uses it, when one call a deployment
// is noise. The error is for no answer at all (no key, no route, a
// timeout); an HTTP error status is a result. Neither ever holds the key.
func Probe(ctx context.Context, d budget.Deployment, o ProbeOptions) (ProbeResult, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	httpClient := o.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		azure.WithEndpoint(d.Resource(), d.APIVersion),
		option.WithHTTPClient(httpClient),
		option.WithMaxRetries(0), // one request: a retry would hide what the first answer said
	}
	if plainHTTP(d.Resource()) {
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	key := ""
	switch {
	case d.Auth.APIKeyEnv != "":
		if key = getenv(d.Auth.APIKeyEnv); key == "" {
			return ProbeResult{}, fmt.Errorf("environment variable %s (auth.api_key_env) is empty or unset", d.Auth.APIKeyEnv)
		}
		opts = append(opts, azure.WithAPIKey(key))
	case d.Auth.Entra:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return ProbeResult{}, fmt.Errorf("no Entra ID credential: %w", err)
		}
		opts = append(opts, azure.WithTokenCredential(cred))
	default:
		return ProbeResult{}, errors.New("no auth: set auth.api_key_env or auth.entra")
	}
	scrub := func(s string) string {
		if key == "" {
			return s
		}
		return strings.ReplaceAll(s, key, redact.Marker)
	}

	p := openai.ChatCompletionNewParams{
		Model:    d.Deployment,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("ping")},
		N:        openai.Int(1),
	}
	if info, err := budget.ModelFamily(d.Model, d.Family); err == nil && info.Family == budget.Reasoning {
		// Reasoning models refuse max_tokens; one token of
		// max_completion_tokens is spent thinking, which still answers 200.
		p.MaxCompletionTokens = openai.Int(1)
		if len(info.Efforts) > 0 {
			p.ReasoningEffort = shared.ReasoningEffort(info.Efforts[0]) // the table lists the lowest first
		}
	} else {
		p.MaxTokens = openai.Int(1)
	}

	client := openai.NewClient(opts...)
	start := time.Now()
	var raw *http.Response
	res, err := client.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw))
	r := ProbeResult{Latency: time.Since(start)}
	var apierr *openai.Error
	switch {
	case errors.As(err, &apierr):
		r.Status, r.Code, r.Message = apierr.StatusCode, scrub(apierr.Code), scrub(cut(apierr.Message, 300))
		if apierr.Response != nil {
			r.Header = rateHeaders(apierr.Response.Header)
		}
		return r, nil
	case err != nil && raw != nil:
		// An answer, but not a chat completion (a proxy's page, say).
		r.Status, r.Header = raw.StatusCode, rateHeaders(raw.Header)
		return r, fmt.Errorf("the answer (HTTP %d) is not a chat completion: %s", raw.StatusCode, scrub(err.Error()))
	case err != nil:
		return r, errors.New(scrub(err.Error()))
	}
	r.Model = res.Model
	if raw != nil {
		r.Status, r.Header = raw.StatusCode, rateHeaders(raw.Header)
	}
	return r, nil
}

// rateHeaders keeps the rate-limit headers of h: the rest of an answer is
// no business of a probe's caller.
func rateHeaders(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-ratelimit-") || strings.HasPrefix(lk, "x-rate-limit-") {
			out[k] = append([]string(nil), v...)
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
