package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Truncation is what to do with an answer cut at its cap.
type Truncation int

const (
	// FailTruncated fails the call with a *TruncatedError.
	FailTruncated Truncation = iota
	// RetryTruncated asks once more with twice the cap.
	RetryTruncated
)

// Caller makes typed model calls: a call type and its input become a chat
// request with the type's cap, n and schema, placed through the budget,
// and the answer is parsed into the type's value. Never does a truncated
// or invalid answer reach the caller as if it were good.
type Caller struct {
	Types      *calltypes.Registry
	Dispatcher *Dispatcher // nil when replaying a cassette
	Truncation Truncation
	// Cassette records every exchange, or answers from a recording.
	Cassette *Cassette
	// MaxTokensLimit bounds a truncation retry's cap (default 16,384).
	MaxTokensLimit int64

	mu    sync.Mutex
	stats map[string]*TypeStats
}

// TypeStats counts what happened to one type's calls.
type TypeStats struct {
	Calls     int64 `json:"calls"`
	Truncated int64 `json:"truncated"` // answers cut at the cap: the cap is too tight
	Repaired  int64 `json:"repaired"`  // invalid answers fixed by one repair request
	Invalid   int64 `json:"invalid"`   // answers still invalid after it
}

// Record is what one call did, as `headroom call` prints it.
type Record struct {
	Type           string `json:"type"`
	Deployment     string `json:"deployment"`
	MaxTokens      int64  `json:"max_tokens"`
	N              int64  `json:"n"`
	TokensReserved int64  `json:"tokens_reserved"`
	TokensUsed     int64  `json:"tokens_used"`
	LatencyMS      int64  `json:"latency_ms"`
	Output         any    `json:"output"`
}

// TruncatedError is an answer cut at its cap (finish_reason "length").
type TruncatedError struct {
	Type      string
	MaxTokens int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("llm: the %s answer was cut at its cap of %d tokens: raise max_tokens for %s", e.Type, e.MaxTokens, e.Type)
}

// InvalidOutputError is an answer that did not parse, even after one
// repair request.
type InvalidOutputError struct {
	Type string
	Text string // the last answer, as the model gave it
	Err  error
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("llm: the %s answer is not valid after a repair request: %v", e.Type, e.Err)
}

func (e *InvalidOutputError) Unwrap() error { return e.Err }

// CallOptions place one call.
type CallOptions struct {
	Session string // prefer the deployment that served this session last
}

// Stats returns a copy of the per-type counters.
func (c *Caller) Stats() map[string]TypeStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]TypeStats, len(c.stats))
	for k, v := range c.stats {
		out[k] = *v
	}
	return out
}

func (c *Caller) count(typ string, f func(*TypeStats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stats == nil {
		c.stats = map[string]*TypeStats{}
	}
	if c.stats[typ] == nil {
		c.stats[typ] = &TypeStats{}
	}
	f(c.stats[typ])
}

// Estimate is the cost a call reserves: the larger of the tokenizer's
// prompt count (with the chat format's overhead) and Azure's
// character-based estimate, plus the cap times n.
func Estimate(msgs []tokens.Message, maxTokens, n int64) int64 {
	prompt := max(tokens.Chat(msgs), tokens.CharEstimate(msgs))
	return int64(prompt) + maxTokens*max(1, n)
}

// Call runs one call of the named type with input (marshalled to JSON as
// the user message).
func (c *Caller) Call(ctx context.Context, typeName string, input any, o CallOptions) (Record, error) {
	t, ok := c.Types.Lookup(typeName)
	if !ok {
		return Record{}, fmt.Errorf("llm: unknown call type %q", typeName)
	}
	in, err := json.Marshal(input)
	if err != nil {
		return Record{}, fmt.Errorf("llm: %s input: %w", typeName, err)
	}
	c.count(t.Name, func(s *TypeStats) { s.Calls++ })
	msgs := []tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: string(in)}}
	rec := Record{Type: t.Name, MaxTokens: t.MaxTokens, N: max(1, t.N)}
	start := time.Now()

	text, err := c.exchange(ctx, t, msgs, t.MaxTokens, o, &rec)
	var tr *TruncatedError
	if errors.As(err, &tr) && c.Truncation == RetryTruncated {
		// Once, with twice the cap: the answer is worth more than its
		// tokens, but the cap stays a property of the type.
		limit := c.MaxTokensLimit
		if limit <= 0 {
			limit = 16384
		}
		rec.MaxTokens = min(2*t.MaxTokens, limit)
		text, err = c.exchange(ctx, t, msgs, rec.MaxTokens, o, &rec)
	}
	if err != nil {
		return rec, err
	}
	out, perr := t.Parse(text)
	if perr != nil {
		// One repair: show the model its answer and what is wrong with it.
		repair := append(msgs[:2:2],
			tokens.Message{Role: "assistant", Content: text},
			tokens.Message{Role: "user", Content: "That answer is not valid: " + perr.Error() + ". Answer again with JSON only, following the schema."})
		text2, err := c.exchange(ctx, t, repair, rec.MaxTokens, o, &rec)
		if err != nil {
			return rec, err
		}
		if out, perr = t.Parse(text2); perr != nil {
			c.count(t.Name, func(s *TypeStats) { s.Invalid++ })
			return rec, &InvalidOutputError{Type: t.Name, Text: text2, Err: perr}
		}
		c.count(t.Name, func(s *TypeStats) { s.Repaired++ })
	}
	if rec.LatencyMS == 0 {
		rec.LatencyMS = time.Since(start).Milliseconds()
	}
	rec.Output = out
	return rec, nil
}

// exchange sends one request (or answers it from the cassette) and returns
// the answer's text; it adds what it reserved and used to rec.
func (c *Caller) exchange(ctx context.Context, t calltypes.Type, msgs []tokens.Message, maxTokens int64, o CallOptions, rec *Record) (string, error) {
	params := request(t, msgs, maxTokens)
	body, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	var res openai.ChatCompletion
	var x Exchange
	if c.Cassette.Replaying() {
		if x, err = c.Cassette.answer(t.Name, c.Cassette.scrub(body)); err != nil {
			return "", fmt.Errorf("llm: replay %s: %w", t.Name, err)
		}
		if err := json.Unmarshal(x.Response, &res); err != nil {
			return "", fmt.Errorf("llm: replay %s: the recorded response does not parse: %w", t.Name, err)
		}
		if err := c.Cassette.record(x); err != nil { // when recording the replay too
			return "", fmt.Errorf("llm: cassette: %w", err)
		}
	} else {
		if c.Dispatcher == nil {
			return "", errors.New("llm: no dispatcher and no cassette to replay")
		}
		priority := budget.Interactive
		if t.Priority == calltypes.Background {
			priority = budget.Background
		}
		call := budget.Call{Tokens: Estimate(msgs, maxTokens, max(1, t.N)), Class: priority, Session: o.Session}
		out, r, err := c.Dispatcher.Chat(ctx, call, params)
		if err != nil {
			return "", err
		}
		res = *out
		x = Exchange{Type: t.Name, Key: requestKey(c.Cassette.scrub(body)), Request: body,
			Response: compact([]byte(out.RawJSON())), Deployment: r.Deployment, Reserved: r.Reserved,
			Used: out.Usage.TotalTokens, LatencyMS: r.Latency.Milliseconds()}
		if err := c.Cassette.record(x); err != nil {
			return "", fmt.Errorf("llm: cassette: %w", err)
		}
	}
	rec.Deployment = x.Deployment
	rec.TokensReserved += x.Reserved
	rec.TokensUsed += x.Used
	rec.LatencyMS += x.LatencyMS
	if len(res.Choices) == 0 {
		return "", fmt.Errorf("llm: the %s answer has no choices", t.Name)
	}
	if res.Choices[0].FinishReason == "length" {
		c.count(t.Name, func(s *TypeStats) { s.Truncated++ })
		return "", &TruncatedError{Type: t.Name, MaxTokens: maxTokens}
	}
	return res.Choices[0].Message.Content, nil
}

// request builds the chat request of a call type: its cap, n, temperature
// and strict JSON schema. The model is set per attempt by the dispatcher.
func request(t calltypes.Type, msgs []tokens.Message, maxTokens int64) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		MaxTokens:   openai.Int(maxTokens),
		N:           openai.Int(max(1, t.N)),
		Temperature: openai.Float(t.Temperature),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: t.Name, Strict: openai.Bool(true), Schema: t.Schema,
				},
			},
		},
	}
	for _, m := range msgs {
		switch m.Role {
		case "system":
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Content))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	return p
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
