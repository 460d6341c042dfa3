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

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// CalibrationPrompt is the one message ProbeCompletion sends: short, and
// asking for an answer shorter still, so that nearly all of a large cap
// goes unused.
const CalibrationPrompt = "Reply with the single word ok."

// CompletionResult is what one chat completion sent by ProbeCompletion
// saw.
type CompletionResult struct {
	// Status is the HTTP status of the answer; 0 when nothing answered.
	Status int
	// Header holds the answer's rate-limit headers and nothing else.
	Header http.Header
	// Code and Message are Azure's error for a status other than 2xx.
	Code, Message string
	// PromptTokens, CompletionTokens and TotalTokens are the answer's usage.
	PromptTokens, CompletionTokens, TotalTokens int64
	// Estimate is what headroom reserves for the call as it was sent
	// (Estimate: the prompt by its characters plus the cap).
	Estimate int64
	// Lag runs from the request going out on its connection to the first
	// byte of the answer: the latest moment the server can have counted
	// the call whose count the answer's headers carry. Connection set-up
	// is left out; it is the client's, not the count's.
	Lag time.Duration
	// Latency is the whole call, connection set-up included.
	Latency time.Duration
}

// ProbeCompletion sends one chat completion to d with the answer capped at
// maxTokens (max_completion_tokens and the lowest effort on a reasoning
// model), n 1 and CalibrationPrompt, and reports its status, rate-limit
// headers, usage and timing. Like Probe it goes around the budget, reads
// the key as the dispatcher does (auth.api_key_env or Entra ID) and never
// returns it; the error is for no answer at all.
func ProbeCompletion(ctx context.Context, d budget.Deployment, maxTokens int64, o ProbeOptions) (CompletionResult, error) {
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
		option.WithMaxRetries(0), // one request: a retry would be a second charge
	}
	if plainHTTP(d.Resource()) {
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	key := ""
	switch {
	case d.Auth.APIKeyEnv != "":
		if key = getenv(d.Auth.APIKeyEnv); key == "" {
			return CompletionResult{}, fmt.Errorf("environment variable %s (auth.api_key_env) is empty or unset", d.Auth.APIKeyEnv)
		}
		opts = append(opts, azure.WithAPIKey(key))
	case d.Auth.Entra:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return CompletionResult{}, fmt.Errorf("no Entra ID credential: %w", err)
		}
		opts = append(opts, azure.WithTokenCredential(cred))
	default:
		return CompletionResult{}, errors.New("no auth: set auth.api_key_env or auth.entra")
	}
	scrub := func(s string) string {
		if key == "" {
			return s
		}
		return strings.ReplaceAll(s, key, redact.Marker)
	}

	p := openai.ChatCompletionNewParams{
		Model:    d.Deployment,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(CalibrationPrompt)},
		N:        openai.Int(1),
	}
	if info, err := budget.ModelFamily(d.Model, d.Family); err == nil && info.Family == budget.Reasoning {
		p.MaxCompletionTokens = openai.Int(maxTokens)
		if len(info.Efforts) > 0 {
			p.ReasoningEffort = shared.ReasoningEffort(info.Efforts[0]) // the table lists the lowest first
		}
	} else {
		p.MaxTokens = openai.Int(maxTokens)
	}
	r := CompletionResult{Estimate: Estimate([]tokens.Message{{Role: "user", Content: CalibrationPrompt}}, maxTokens, 1)}

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
	res, err := client.Chat.Completions.New(ctx, p, option.WithResponseInto(&raw))
	r.Latency = time.Since(start)
	mu.Lock()
	if !wrote.IsZero() && first.After(wrote) {
		r.Lag = first.Sub(wrote)
	}
	mu.Unlock()
	var apierr *openai.Error
	switch {
	case errors.As(err, &apierr):
		r.Status, r.Code, r.Message = apierr.StatusCode, scrub(apierr.Code), scrub(cut(apierr.Message, 300))
		if apierr.Response != nil {
			r.Header = rateHeaders(apierr.Response.Header)
		}
		return r, nil
	case err != nil && raw != nil:
		r.Status, r.Header = raw.StatusCode, rateHeaders(raw.Header)
		return r, fmt.Errorf("the answer (HTTP %d) is not a chat completion: %s", raw.StatusCode, scrub(err.Error()))
	case err != nil:
		return r, errors.New(scrub(err.Error()))
	}
	r.PromptTokens, r.CompletionTokens, r.TotalTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.TotalTokens
	if raw != nil {
		r.Status, r.Header = raw.StatusCode, rateHeaders(raw.Header)
	}
	return r, nil
}
