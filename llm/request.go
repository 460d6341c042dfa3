package llm

import (
	"encoding/base64"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// request is one chat request of a call, built from its type: the type's
// cap (or the cap of a retry), n and strict schema, in the shape of the
// model family of the pool it goes to. A call makes one, and another for
// a fallback, a truncation retry or a repair.
type request struct {
	t      calltypes.Type
	msgs   []tokens.Message
	images []calltypes.Image // carried by the first user message, after its text
	tier   string            // the service tier asked for; "" the default
	cap    int64             // max_tokens, or max_completion_tokens on a reasoning model
	pool   string
	shape  Shape
	params openai.ChatCompletionNewParams // the model is set per attempt by the dispatcher
}

func newRequest(t calltypes.Type, msgs []tokens.Message, images []calltypes.Image, tier string, cap int64, pool string, shape Shape) *request {
	r := &request{t: t, msgs: msgs, images: images, tier: tier, cap: cap, pool: pool, shape: shape}
	r.params = shape.request(t, msgs, images, cap)
	if tier != "" {
		r.params.ServiceTier = openai.ChatCompletionNewParamsServiceTier(tier)
	}
	return r
}

// messages are a call's system prompt and user message: the input
// written by the type's Message, or the input's JSON when it has none.
func messages(t calltypes.Type, in json.RawMessage) []tokens.Message {
	user := string(in)
	if t.Message != nil {
		user = t.Message(in)
	}
	return []tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: user}}
}

// n is the request's number of choices.
func (r *request) n() int64 { return max(1, r.t.N) }

// withCap is r again with another cap.
func (r *request) withCap(cap int64) *request {
	return newRequest(r.t, r.msgs, r.images, r.tier, cap, r.pool, r.shape)
}

// onDefaultTier is r again on the default service tier.
func (r *request) onDefaultTier() *request {
	return newRequest(r.t, r.msgs, r.images, calltypes.TierDefault, r.cap, r.pool, r.shape)
}

// imageTokens is what r's images are reserved at on its pool: the
// published rule of the model's family (budget/models), or the admission
// charge calibrate measured where that is more, since what a reservation
// must cover is what Azure admits.
func (r *request) imageTokens() int64 {
	var n int64
	for _, im := range r.images {
		n += max(models.ImageTokens(r.shape.ModelName, im.Width, im.Height, im.Detail), r.shape.ImageAdmission)
	}
	return n
}

// repair is r followed by the answer it got and what is wrong with it: the
// model is asked once to answer again.
func (r *request) repair(text string, problem error) *request {
	msgs := append(r.msgs[:2:2],
		tokens.Message{Role: "assistant", Content: text},
		tokens.Message{Role: "user", Content: "That answer is not valid: " + problem.Error() + ". Answer again with JSON only, following the schema."})
	return newRequest(r.t, msgs, r.images, r.tier, r.cap, r.pool, r.shape)
}

// body is the request as JSON: what a cassette keys, keeps and matches.
func (r *request) body() ([]byte, error) { return json.Marshal(r.params) }

// request writes the chat request of a call type: its cap, n,
// temperature or reasoning effort (as the model family takes them) and
// strict JSON schema.
func (s Shape) request(t calltypes.Type, msgs []tokens.Message, images []calltypes.Image, maxTokens int64) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		N: openai.Int(max(1, t.N)),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: t.Name, Strict: openai.Bool(true), Schema: t.Schema,
				},
			},
		},
	}
	s.apply(&p, t, maxTokens)
	pictured := false
	for _, m := range msgs {
		switch {
		case m.Role == "system":
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case m.Role == "assistant":
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Content))
		case len(images) > 0 && !pictured:
			pictured = true
			p.Messages = append(p.Messages, openai.UserMessage(withImages(m.Content, images)))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	return p
}

// withImages is a user message's text followed by its images, as data
// URLs: the text first, so that a prompt's stable part leads whatever
// the pixels are.
func withImages(text string, images []calltypes.Image) []openai.ChatCompletionContentPartUnionParam {
	parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(text)}
	for _, im := range images {
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
			URL:    "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data),
			Detail: im.Detail,
		}))
	}
	return parts
}
