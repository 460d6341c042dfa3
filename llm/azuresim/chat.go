package azuresim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// chatRequest is the part of a chat completions body the simulator reads.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	N                   *int64          `json:"n"`
	BestOf              *int64          `json:"best_of"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Stream              bool            `json:"stream"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	ReasoningEffort     *string         `json:"reasoning_effort"`
	ServiceTier         *string         `json:"service_tier"`
	// PromptCacheKey changes nothing here: Azure uses it to route calls
	// that share a prefix to one cache, and the simulator keeps one cache
	// per deployment anyway.
	PromptCacheKey *string `json:"prompt_cache_key"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
}

// contentText returns a message's content whether it is a string or an
// array of content parts, reading only their text.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// cap is the call's declared answer length and how many answers it asks for.
type capped struct {
	maxTokens int64
	choices   int64 // n
	charged   int64 // max(n, best_of)
}

// chatPrompt is a chat call's messages as the simulator counts them, and
// the images each carries.
type chatPrompt struct {
	msgs []tokens.Message
	pics [][]picture
}

// imageCount is a prompt's pictures as counted: how many, their
// published tokens, and what admission charges for them.
type imageCount struct {
	n, tokens, charged int64
}

// countImages counts p's pictures on d: admission charges each its
// published count, or the deployment's flat image_admission when it sets
// one.
func (d *deployment) countImages(p chatPrompt) imageCount {
	var im imageCount
	for _, pics := range p.pics {
		for _, pic := range pics {
			n := ImageTokens(d.cfg.Model, pic.width, pic.height, pic.detail)
			im.n++
			im.tokens += n
			im.charged += cmp.Or(d.cfg.ImageAdmission, n)
		}
	}
	return im
}

// Estimate is what Azure charges a call at admission: a character-based
// prompt estimate, not a tokenizer's count (a quarter token per
// character, rounded up, plus one for each message, which matches the
// published measurements: a 28-character gpt-4o prompt was charged 8
// tokens, 44 characters of embeddings input 11), plus the answer cap times
// max(n, best_of).
func Estimate(msgs []tokens.Message, maxTokens, n, bestOf int64) int64 {
	var prompt int64
	for _, m := range msgs {
		chars := utf8.RuneCountInString(m.Content) + utf8.RuneCountInString(m.Name)
		prompt += int64(chars+3)/4 + 1
	}
	return prompt + maxTokens*max(1, n, bestOf)
}

func (r *resource) chat(w http.ResponseWriter, req *http.Request) {
	var body chatRequest
	if !r.sim.decode(w, req, &body) {
		return
	}
	c, ok := r.route(w, req, body.Model, "ChatCompletions_Create")
	if !ok {
		return
	}
	if !c.checkReasoning(w, body) {
		return
	}
	p, lim, ok := c.checkChat(w, body)
	if !ok {
		return
	}
	tier, ok := c.checkTier(w, body.ServiceTier)
	if !ok {
		return
	}
	// A reasoning model thinks inside the cap before it writes a word:
	// what is left is the answer's, and nothing left is an empty answer
	// cut for length.
	var reasoning int64
	if isReasoning(c.d.cfg.Model) {
		effort := ""
		if body.ReasoningEffort != nil {
			effort = *body.ReasoningEffort
		}
		reasoning = min(c.d.reasoningTokens(effort), lim.maxTokens)
	}
	im := c.d.countImages(p)
	t, ok := c.admit(w, Estimate(p.msgs, lim.maxTokens, lim.choices, lim.charged)+im.charged)
	if !ok {
		return
	}
	r.sim.noteCall(c.d, tier, im)
	in := Request{
		Deployment: c.d.cfg.Name, Messages: p.msgs, Images: int(im.n), ResponseFormat: body.ResponseFormat,
		MaxTokens: lim.maxTokens - reasoning, OutputTokens: c.d.cfg.OutputTokens,
	}
	prompt, cached := r.sim.promptTokens(c.d, p.msgs, p.pics, im.tokens)
	var completion int64
	choices := make([]map[string]any, lim.choices)
	for i := range choices {
		text, cut := "", true
		if left := lim.maxTokens - reasoning; left > 0 {
			text, cut = tokens.Truncate(c.d.model.Reply(in), int(left))
		}
		finish := "stop"
		if cut {
			finish = "length"
		}
		completion += int64(tokens.Count(text)) + reasoning
		choices[i] = map[string]any{
			"index":         i,
			"message":       map[string]any{"role": "assistant", "content": text, "refusal": nil},
			"finish_reason": finish,
			"logprobs":      nil,
		}
	}
	if !c.finish(w, req, t, prompt, completion) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":                 r.sim.newID("chatcmpl", ""),
		"object":             "chat.completion",
		"created":            time.Now().Unix(),
		"model":              c.modelName(),
		"choices":            choices,
		"service_tier":       tier,
		"system_fingerprint": "fp_headroom_sim",
		"usage": map[string]any{
			"prompt_tokens":     prompt,
			"completion_tokens": completion,
			"total_tokens":      prompt + completion,
			"prompt_tokens_details": map[string]any{
				"cached_tokens": cached,
			},
			"completion_tokens_details": map[string]any{
				"reasoning_tokens": reasoning * lim.choices,
			},
		},
	})
}

// noteCall counts an accepted call's images and service tier.
func (s *Sim) noteCall(d *deployment, tier string, im imageCount) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.stats.Images += im.n
	d.stats.ImageTokens += im.tokens
	d.stats.ImageTokensCharged += im.charged
	switch tier {
	case tierFlex:
		d.stats.Tiers.Flex++
	case tierPriority:
		d.stats.Tiers.Priority++
	default:
		d.stats.Tiers.Default++
	}
}

// checkChat validates a chat body the way Azure would, answering 400 with
// the parameter at fault.
func (c *call) checkChat(w http.ResponseWriter, body chatRequest) (chatPrompt, capped, bool) {
	if len(body.Messages) == 0 {
		badRequest(w, "messages", "'messages' is a required property and must hold at least one message")
		return chatPrompt{}, capped{}, false
	}
	if body.Stream {
		badRequest(w, "stream", "the simulator does not stream; send stream: false")
		return chatPrompt{}, capped{}, false
	}
	prompt := chatPrompt{msgs: make([]tokens.Message, len(body.Messages)), pics: make([][]picture, len(body.Messages))}
	for i, m := range body.Messages {
		text, pics, err := chatContent(m.Content)
		if err != nil {
			param := fmt.Sprintf("messages[%d].content%s", i, err.param)
			badRequest(w, param, "Invalid '%s': %s.", param, err.msg)
			return chatPrompt{}, capped{}, false
		}
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			badRequest(w, fmt.Sprintf("messages[%d].role", i), "Invalid value for 'messages[%d].role': %q is not one of system, developer, user, assistant, tool.", i, m.Role)
			return chatPrompt{}, capped{}, false
		}
		prompt.msgs[i] = tokens.Message{Role: m.Role, Name: m.Name, Content: text}
		prompt.pics[i] = pics
	}
	lim := capped{maxTokens: c.d.defaultMaxTokens(), choices: 1, charged: 1}
	for _, p := range []struct {
		name string
		v    *int64
		dst  *int64
		hi   int64
	}{
		{"max_tokens", body.MaxTokens, &lim.maxTokens, 1 << 20},
		{"max_completion_tokens", body.MaxCompletionTokens, &lim.maxTokens, 1 << 20},
		{"n", body.N, &lim.choices, 128},
		{"best_of", body.BestOf, &lim.charged, 128},
	} {
		if p.v == nil {
			continue
		}
		if *p.v < 1 || *p.v > p.hi {
			badRequest(w, p.name, "Invalid '%s': integer %d is out of range: expected 1 to %d.", p.name, *p.v, p.hi)
			return chatPrompt{}, capped{}, false
		}
		*p.dst = *p.v
	}
	lim.charged = max(lim.charged, lim.choices)
	return prompt, lim, true
}

func (d *deployment) defaultMaxTokens() int64 {
	if d.cfg.DefaultMaxTokens > 0 {
		return d.cfg.DefaultMaxTokens
	}
	return defaultMaxTokens
}

// modelName is what responses report as the model: name-version, as
// Azure does, or the deployment name when no model is configured.
func (c *call) modelName() string {
	m := c.d.cfg.Model
	if m == "" {
		return c.d.cfg.Name
	}
	if v := c.d.cfg.ModelVersion; v != "" {
		return m + "-" + v
	}
	return m
}
