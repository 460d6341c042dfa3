package azuresim

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// responsesRequest is the part of a Responses API body the simulator reads.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
	Store              *bool           `json:"store"`
	PreviousResponseID string          `json:"previous_response_id"`
	Stream             bool            `json:"stream"`
	ServiceTier        *string         `json:"service_tier"`
	Include            []string        `json:"include"`
	// PromptCacheKey is accepted and changes nothing, as on chat calls.
	PromptCacheKey *string `json:"prompt_cache_key"`
}

type inputItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Output    string          `json:"output"`
	Arguments string          `json:"arguments"`
	// EncryptedContent is a reasoning item's, sealed by the resource that
	// made it.
	EncryptedContent string `json:"encrypted_content"`
}

// sealed is a reasoning item's encrypted content as this resource
// writes it: opaque to the client, readable by the resource alone, as
// Azure's are (sealed with the resource's key, so store=false does not
// free a conversation that carries them from its resource).
func (r *resource) sealed(id string) string {
	return base64.StdEncoding.EncodeToString([]byte("sealed:" + r.tag + ":" + id))
}

// sealedBy is the resource tag that sealed content, "" when it reads as
// no simulator's.
func sealedBy(content string) string {
	raw, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return ""
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || parts[0] != "sealed" {
		return ""
	}
	return parts[1]
}

// differentResource is the message Azure gives when an item id minted by
// one resource is sent to another.
const differentResource = "The requested item was created under a different Azure OpenAI resource. Use the same resource that created the item to access it."

// responses serves the Responses API, minimal but stateful: with store
// (the default) every response and output item gets an id scoped to this
// resource, and later calls may refer to them here and nowhere else.
func (r *resource) responses(w http.ResponseWriter, req *http.Request) {
	var body responsesRequest
	if !r.sim.decode(w, req, &body) {
		return
	}
	c, ok := r.route(w, req, body.Model, "Responses_Create")
	if !ok {
		return
	}
	if body.Stream {
		badRequest(w, "stream", "the simulator does not stream; send stream: false")
		return
	}
	conv, ok := r.conversation(w, body)
	if !ok {
		return
	}
	tier, ok := c.checkTier(w, body.ServiceTier)
	if !ok {
		return
	}
	maxOut := c.d.defaultMaxTokens()
	if v := body.MaxOutputTokens; v != nil {
		if *v < 16 || *v > 1<<20 {
			badRequest(w, "max_output_tokens", "Invalid 'max_output_tokens': integer %d is out of range: expected at least 16.", *v)
			return
		}
		maxOut = *v
	}
	t, ok := c.admit(w, Estimate(conv, maxOut, 1, 1))
	if !ok {
		return
	}
	r.sim.noteCall(c.d, tier, imageCount{})
	text, cut := tokens.Truncate(c.d.model.Reply(Request{
		Deployment: c.d.cfg.Name, Messages: conv, MaxTokens: maxOut, OutputTokens: c.d.cfg.OutputTokens,
	}), int(maxOut))
	in, cached := r.sim.promptTokens(c.d, conv, nil, 0)
	out := int64(tokens.Count(text))
	if !c.finish(w, req, t, in, out) {
		return
	}
	store := body.Store == nil || *body.Store
	respID, msgID := r.sim.newID("resp", r.tag), r.sim.newID("msg", r.tag)
	reply := tokens.Message{Role: "assistant", Content: text}
	if store {
		r.items.put(respID, append(conv, reply))
		r.items.put(msgID, []tokens.Message{reply})
	}
	output := []any{}
	if isReasoning(c.d.cfg.Model) {
		// A reasoning model's output leads with its reasoning item; its
		// encrypted content only when asked for, as Azure gives it.
		rs := map[string]any{"type": "reasoning", "id": r.sim.newID("rs", r.tag), "summary": []any{}}
		if slices.Contains(body.Include, "reasoning.encrypted_content") {
			rs["encrypted_content"] = r.sealed(rs["id"].(string))
		}
		output = append(output, rs)
	}
	status, incomplete := "completed", any(nil)
	if cut {
		status, incomplete = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	var prev any
	if body.PreviousResponseID != "" {
		prev = body.PreviousResponseID
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":         respID,
		"object":     "response",
		"created_at": time.Now().Unix(),
		"status":     status,
		"model":      c.modelName(),
		"output": append(output, map[string]any{
			"type": "message", "id": msgID, "status": status, "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		}),
		"usage": map[string]any{
			"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
			"input_tokens_details": map[string]int64{"cached_tokens": cached},
		},
		"service_tier":         tier,
		"store":                store,
		"previous_response_id": prev,
		"max_output_tokens":    maxOut,
		"incomplete_details":   incomplete,
		"error":                nil,
	})
}

// conversation assembles the prompt: the stored conversation named by
// previous_response_id, the instructions, and the input items, refusing
// ids this resource did not mint.
func (r *resource) conversation(w http.ResponseWriter, body responsesRequest) ([]tokens.Message, bool) {
	var conv []tokens.Message
	if id := body.PreviousResponseID; id != "" {
		if !r.own(w, "previous_response_id", id) {
			return nil, false
		}
		prev, ok := r.items.get(id)
		if !ok {
			badRequest(w, "previous_response_id", "Previous response with id '%s' not found.", id)
			return nil, false
		}
		conv = append(conv, prev...)
	}
	if body.Instructions != "" {
		conv = append(conv, tokens.Message{Role: "system", Content: body.Instructions})
	}
	if len(body.Input) == 0 || string(body.Input) == "null" {
		badRequest(w, "input", "'input' is a required property")
		return nil, false
	}
	var s string
	if json.Unmarshal(body.Input, &s) == nil {
		return append(conv, tokens.Message{Role: "user", Content: s}), true
	}
	var items []inputItem
	if err := json.Unmarshal(body.Input, &items); err != nil {
		badRequest(w, "input", "Invalid 'input': expected a string or an array of input items.")
		return nil, false
	}
	for i, it := range items {
		param := fmt.Sprintf("input[%d].id", i)
		if it.ID != "" && !r.own(w, param, it.ID) {
			return nil, false
		}
		if it.Type == "reasoning" {
			// Read by its sealer alone: content another resource sealed
			// is refused, whatever the item's id says.
			if tag := sealedBy(it.EncryptedContent); it.EncryptedContent != "" && tag != r.tag {
				badRequest(w, fmt.Sprintf("input[%d].encrypted_content", i), differentResource)
				return nil, false
			}
			continue
		}
		if it.Type == "item_reference" {
			ref, ok := r.items.get(it.ID)
			if !ok {
				badRequest(w, param, "Item with id '%s' not found.", it.ID)
				return nil, false
			}
			conv = append(conv, ref...)
			continue
		}
		text, err := contentText(it.Content)
		if err != nil {
			badRequest(w, fmt.Sprintf("input[%d].content", i), "Invalid 'input[%d].content': %v.", i, err)
			return nil, false
		}
		conv = append(conv, tokens.Message{Role: cmp.Or(it.Role, "user"), Content: text + it.Output + it.Arguments})
	}
	return conv, true
}

// own answers the different-resource 400 when id was minted elsewhere.
func (r *resource) own(w http.ResponseWriter, param, id string) bool {
	if tag := mintedBy(id); tag != "" && tag != r.tag {
		badRequest(w, param, differentResource)
		return false
	}
	return true
}
