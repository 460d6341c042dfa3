package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

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

// Caller makes model calls: a call type and its input become a chat
// request with the type's cap, n and schema, placed through the budget,
// and the answer is parsed into the type's value. Never does a truncated
// or invalid answer reach the caller as if it were good. Open builds one
// from a config; Close releases what Open started.
type Caller struct {
	Types      *calltypes.Registry
	Dispatcher *Dispatcher // nil when replaying a cassette
	Truncation Truncation
	// Cassette records every exchange, or answers from a recording.
	Cassette *Cassette
	// Shape writes requests for the model family behind them; the zero
	// value is a chat model. Open sets it from the config's default pool.
	Shape Shape
	// Fallback is where calls go when the default pool cannot serve them
	// in time, and the share of calls sent there anyway to keep it warm;
	// Open sets it from the config. The zero value has none.
	Fallback Fallback

	mu     sync.Mutex
	stats  map[string]*TypeStats
	closed []func() error // what Open started, last first
}

// Close releases what Open started for the caller: the budget store, the
// cassette's file. A Caller built by hand has nothing to close.
func (c *Caller) Close() error {
	c.mu.Lock()
	fs := c.closed
	c.closed = nil
	c.mu.Unlock()
	var errs []error
	for i := len(fs) - 1; i >= 0; i-- {
		errs = append(errs, fs[i]())
	}
	return errors.Join(errs...)
}

// OnClose adds f to what Close runs (last added, first run): a package
// that opens a Caller on something it started stops it there.
func (c *Caller) OnClose(f func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = append(c.closed, f)
}

// TypeStats counts what happened to one type's calls.
type TypeStats struct {
	Calls     int64 `json:"calls"`
	Truncated int64 `json:"truncated"` // answers cut at the cap: the cap is too tight
	// ReasoningTruncated counts the calls whose cap went to reasoning with
	// no answer written (a reasoning model), apart from Truncated; by
	// deployment in ReasoningTruncatedBy.
	ReasoningTruncated   int64            `json:"reasoning_truncated,omitempty"`
	ReasoningTruncatedBy map[string]int64 `json:"reasoning_truncated_by,omitempty"`
	// Fallback counts the calls the fallback pool served: Warm of them by
	// the share sent there on purpose, the rest because the primary pool
	// could not serve them in time. FallbackRepaired and FallbackInvalid
	// are the repairs and failures among them, so a schema the fallback
	// model handles worse shows as a count, not as drift.
	Fallback         int64 `json:"fallback,omitempty"`
	FallbackWarm     int64 `json:"fallback_warm,omitempty"`
	FallbackRepaired int64 `json:"fallback_repaired,omitempty"`
	FallbackInvalid  int64 `json:"fallback_invalid,omitempty"`
	Repaired         int64 `json:"repaired"` // invalid answers fixed by one repair request
	Invalid          int64 `json:"invalid"`  // answers still invalid after it
	// TokensReserved is what the type's calls charged the budget, and
	// TokensUsed what they used: their ratio is the reservation error, the
	// throughput an oversized cap throws away.
	TokensReserved int64 `json:"tokens_reserved"`
	TokensUsed     int64 `json:"tokens_used"`
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
	// Priority is the call's class when the budget is short; "" is the
	// type's own.
	Priority calltypes.Priority
	// Allowance is the most the call may reserve over all its requests (a
	// task's token budget, less what it has spent); 0 is no bound. A
	// request that would go past it is never reserved: the call fails
	// with an *OverBudgetError.
	Allowance int64
}

// ErrOverBudget is wrapped by the error of a call stopped by its
// allowance.
var ErrOverBudget = errors.New("llm: the call would reserve more than its allowance")

// OverBudgetError is a request that was not sent because it would have
// reserved more than the call's allowance left.
type OverBudgetError struct {
	Type string
	Need int64 // what the request would reserve
	Left int64 // what the allowance had left
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("llm: a %s request would reserve %d tokens and only %d are left of the allowance: raise the token budget, or lower the type's max_tokens", e.Type, e.Need, e.Left)
}

func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }

// Stats returns a copy of the per-type counters.
func (c *Caller) Stats() map[string]TypeStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]TypeStats, len(c.stats))
	for k, v := range c.stats {
		x := *v
		if v.ReasoningTruncatedBy != nil {
			x.ReasoningTruncatedBy = make(map[string]int64, len(v.ReasoningTruncatedBy))
			for d, n := range v.ReasoningTruncatedBy {
				x.ReasoningTruncatedBy[d] = n
			}
		}
		out[k] = x
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

// Call runs one call of the typed call type t with in as its input, and
// returns the answer as the type's Go value.
func Call[In, Out any](ctx context.Context, c *Caller, t calltypes.Typed[In, Out], in In, o CallOptions) (Out, Report, error) {
	var zero Out
	v, rep, err := c.Call(ctx, t.Name(), in, o)
	if err != nil {
		return zero, rep, err
	}
	out, ok := v.(Out)
	if !ok {
		return zero, rep, fmt.Errorf("llm: the %s type's parser gives a %T, not the %T its typed name promises: register it with calltypes.JSONParser[%T]", t.Name(), v, zero, zero)
	}
	return out, rep, nil
}

// Call runs one call of the named type with input (marshalled to JSON,
// checked by the type's Input first: a misfit is a *calltypes.InputError,
// with nothing reserved or sent; then written as the user message by the
// type's Message, or sent as the JSON when it has none) and returns the
// parsed answer, whose Go type is the
// one the type's parser gives. The typed Call checks that at compile time;
// this one is for types known only by name, such as a config's.
func (c *Caller) Call(ctx context.Context, typeName string, input any, o CallOptions) (any, Report, error) {
	out, rep, err := c.call(ctx, typeName, input, o)
	if rep.Type != "" {
		c.count(rep.Type, func(s *TypeStats) {
			s.TokensReserved += rep.TokensReserved
			s.TokensUsed += rep.TokensUsed
		})
	}
	return out, rep, err
}

func (c *Caller) call(ctx context.Context, typeName string, input any, o CallOptions) (any, Report, error) {
	t, ok := c.Types.Lookup(typeName)
	if !ok {
		return nil, Report{}, fmt.Errorf("llm: unknown call type %q", typeName)
	}
	in, err := json.Marshal(input)
	if err != nil {
		return nil, Report{}, fmt.Errorf("llm: %s input: %w", typeName, err)
	}
	// An input the type does not take is refused before anything is
	// reserved or sent: no tokens go to a request that cannot be right.
	if err := t.CheckInput(in); err != nil {
		return nil, Report{}, err
	}
	if o.Priority != "" {
		t.Priority = o.Priority
	}
	c.count(t.Name, func(s *TypeStats) { s.Calls++ })
	user := string(in)
	if t.Message != nil {
		user = t.Message(in)
	}
	msgs := []tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: user}}
	rt := c.routeOf(t)
	rep := Report{Type: t.Name, N: max(1, t.N)}
	cap := rt.start(t, &rep)
	if rt.fallback {
		c.countFallback(t.Name, true)
	}
	pctx, cancel := rt.primaryContext(ctx)
	text, err := c.exchange(pctx, t, msgs, cap, rt, o, &rep)
	cancel()
	if err != nil && rt.canFallBack(ctx, err) {
		// Degrade before drop: the primary pool cannot serve this call in
		// time; the fallback pool can, through the same parser.
		rt.fallBack()
		cap = rt.start(t, &rep)
		c.countFallback(t.Name, false)
		rep.Retries++
		text, err = c.exchange(ctx, t, msgs, cap, rt, o, &rep)
	}
	var tr *TruncatedError
	var rtr *ReasoningTruncatedError
	if (errors.As(err, &tr) || errors.As(err, &rtr)) && c.Truncation == RetryTruncated {
		// Once, with twice the cap: the answer is worth more than its
		// tokens, but the cap stays a property of the type.
		rep.MaxTokens = min(2*cap, c.Types.ModelLimit())
		rep.Retries++
		text, err = c.exchange(ctx, t, msgs, rep.MaxTokens, rt, o, &rep)
	}
	if err != nil {
		return nil, rep, err
	}
	out, perr := t.Parse(text)
	if perr != nil {
		// One repair: show the model its answer and what is wrong with it.
		repair := append(msgs[:2:2],
			tokens.Message{Role: "assistant", Content: text},
			tokens.Message{Role: "user", Content: "That answer is not valid: " + perr.Error() + ". Answer again with JSON only, following the schema."})
		rep.Retries++
		text2, err := c.exchange(ctx, t, repair, rep.MaxTokens, rt, o, &rep)
		if err != nil {
			return nil, rep, err
		}
		if out, perr = t.Parse(text2); perr != nil {
			c.count(t.Name, func(s *TypeStats) {
				s.Invalid++
				if rt.fallback {
					s.FallbackInvalid++
				}
			})
			return nil, rep, &InvalidOutputError{Type: t.Name, Text: text2, Err: perr}
		}
		c.count(t.Name, func(s *TypeStats) {
			s.Repaired++
			if rt.fallback {
				s.FallbackRepaired++
			}
		})
	}
	return out, rep, nil
}

// exchange sends one request (or answers it from the cassette) and returns
// the answer's text; it adds what the request did to rep.
func (c *Caller) exchange(ctx context.Context, t calltypes.Type, msgs []tokens.Message, maxTokens int64, rt *route, o CallOptions, rep *Report) (string, error) {
	if o.Allowance > 0 {
		need, left := Estimate(msgs, maxTokens, max(1, t.N)), o.Allowance-rep.TokensReserved
		if need > left {
			return "", &OverBudgetError{Type: t.Name, Need: need, Left: max(0, left)}
		}
	}
	params := rt.shape.request(t, msgs, maxTokens)
	body, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	var res openai.ChatCompletion
	if c.Cassette.Replaying() {
		x, err := c.Cassette.answer(t.Name, c.Cassette.scrub(body))
		if err != nil {
			return "", fmt.Errorf("llm: replay %s: %w", t.Name, err)
		}
		if err := json.Unmarshal(x.Response, &res); err != nil {
			return "", fmt.Errorf("llm: replay %s: the recorded response does not parse: %w", t.Name, err)
		}
		if err := c.Cassette.record(x); err != nil { // when recording the replay too
			return "", fmt.Errorf("llm: cassette: %w", err)
		}
		rep.add(x.Report)
	} else {
		if c.Dispatcher == nil {
			return "", errors.New("llm: no dispatcher and no cassette to replay")
		}
		priority := budget.Interactive
		if t.Priority == calltypes.Background {
			priority = budget.Background
		}
		call := budget.Call{Tokens: Estimate(msgs, maxTokens, max(1, t.N)), Class: priority, Session: o.Session, Pool: rt.pool}
		out, r, err := c.Dispatcher.Chat(ctx, call, params)
		rep.add(r) // the retries and 429s count even when the call failed
		if err != nil {
			return "", err
		}
		res = *out
		r.Type, r.MaxTokens, r.N = t.Name, maxTokens, max(1, t.N)
		x := Exchange{Report: r, Key: requestKey(c.Cassette.scrub(body)), Request: body, Response: compact([]byte(out.RawJSON()))}
		if err := c.Cassette.record(x); err != nil {
			return "", fmt.Errorf("llm: cassette: %w", err)
		}
	}
	if len(res.Choices) == 0 {
		return "", fmt.Errorf("llm: the %s answer has no choices", t.Name)
	}
	reasoning := res.Usage.CompletionTokensDetails.ReasoningTokens
	rep.ReasoningTokens += reasoning
	if res.Choices[0].FinishReason == "length" && res.Choices[0].Message.Content == "" && reasoning > 0 {
		dep := rep.Deployment
		c.count(t.Name, func(s *TypeStats) {
			s.ReasoningTruncated++
			if s.ReasoningTruncatedBy == nil {
				s.ReasoningTruncatedBy = map[string]int64{}
			}
			s.ReasoningTruncatedBy[dep]++
		})
		return "", &ReasoningTruncatedError{Type: t.Name, Deployment: dep, MaxTokens: maxTokens, Reasoning: reasoning, Effort: rt.shape.effort(t)}
	}
	if res.Choices[0].FinishReason == "length" {
		c.count(t.Name, func(s *TypeStats) { s.Truncated++ })
		return "", &TruncatedError{Type: t.Name, MaxTokens: maxTokens}
	}
	return res.Choices[0].Message.Content, nil
}

// request builds the chat request of a call type: its cap, n,
// temperature or reasoning effort (as the model family takes them) and
// strict JSON schema. The model is set per attempt by the dispatcher.
func (s Shape) request(t calltypes.Type, msgs []tokens.Message, maxTokens int64) openai.ChatCompletionNewParams {
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
