package llm

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
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
	// ImageTokens is the published count of the image the call carried
	// (ProbeImageCompletion), a part of Estimate; 0 without one.
	ImageTokens int64
}

// ProbeCompletion sends one chat completion to d with the answer capped at
// maxTokens (max_completion_tokens and the lowest effort on a reasoning
// model), n 1 and CalibrationPrompt, and reports its status, rate-limit
// headers, usage and timing. Like Probe it goes around the budget, reads
// the key as the dispatcher does (auth.api_key_env or Entra ID) and never
// returns it; the error is for no answer at all.
func ProbeCompletion(ctx context.Context, d budget.Deployment, maxTokens int64, o ProbeOptions) (CompletionResult, error) {
	a, err := probeChat(ctx, d, CalibrationPrompt, nil, maxTokens, o)
	return CompletionResult{
		Status: a.status, Header: a.header, Code: a.code, Message: a.message,
		PromptTokens: a.usage.PromptTokens, CompletionTokens: a.usage.CompletionTokens, TotalTokens: a.usage.TotalTokens,
		Estimate: Estimate([]tokens.Message{{Role: "user", Content: CalibrationPrompt}}, maxTokens, 1),
		Lag:      a.lag, Latency: a.latency,
	}, err
}

// ProbeImage is the image ProbeImageCompletion sends: a plain 512×512
// square at detail low, one tile on the tile models, so that what its
// admission charges stands out against a call's few text tokens.
var ProbeImage = sync.OnceValue(func() calltypes.Image {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 512, 512))) // a fixed image: encoding it cannot fail
	return calltypes.Image{MIME: "image/png", Data: b.Bytes(), Width: 512, Height: 512, Detail: calltypes.DetailLow}
})

// ProbeImageCompletion is ProbeCompletion with ProbeImage after the
// prompt and a cap of one token: beside a cap-1 call without it, the
// drop in x-ratelimit-remaining-tokens is what Azure's admission charges
// an image, which its documentation does not give. Estimate counts the
// image by the model's published rule (ImageTokens).
func ProbeImageCompletion(ctx context.Context, d budget.Deployment, o ProbeOptions) (CompletionResult, error) {
	img := ProbeImage()
	a, err := probeChat(ctx, d, CalibrationPrompt, []calltypes.Image{img}, 1, o)
	published := models.ImageTokens(d.Model, img.Width, img.Height, img.Detail)
	return CompletionResult{
		Status: a.status, Header: a.header, Code: a.code, Message: a.message,
		PromptTokens: a.usage.PromptTokens, CompletionTokens: a.usage.CompletionTokens, TotalTokens: a.usage.TotalTokens,
		Estimate:    Estimate([]tokens.Message{{Role: "user", Content: CalibrationPrompt}}, 1, 1) + published,
		ImageTokens: published,
		Lag:         a.lag, Latency: a.latency,
	}, err
}
