package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/calltypes"
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
//
// A call is a short pipeline: the request is built from the type
// (request.go), priced and held to the call's allowance (reserve.go), sent
// live, recorded or replayed (sender.go), its answer read (answer.go) and
// parsed, with one repair (parse.go), and what it spent counted
// (stats.go).
type Caller struct {
	// Types are the call types it knows; nil is the four built-ins.
	Types *calltypes.Registry
	// Dispatcher sends the calls; nil when replaying a cassette. Set it,
	// and Cassette, before the first call: the caller chooses how it
	// sends then, and a call after either changed is refused.
	Dispatcher *Dispatcher
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
	// ClassTiers are the service tiers of the calls of each priority
	// class whose type asks for none (a config's service_tiers, such as
	// background: flex); nil is the default tier for all.
	ClassTiers map[calltypes.Priority]string
	// StandIn, when set, says what answers the calls instead of a language
	// model: the embedded default's word-matching stand-in, or a cassette
	// replayed. Results, reports and progress lines show it.
	StandIn string
	// Timeout bounds a call whose context has no deadline, waiting for
	// budget, every request and reading every answer included; 0 is
	// DefaultTimeout.
	Timeout time.Duration

	senderOnce sync.Once
	send       sender
	sentWith   sentWith

	mu      sync.Mutex
	stats   map[string]*TypeStats
	prompts promptTally    // told to the fleet's census
	fleet   fleetTally     // and the caller's totals
	closed  []func() error // what Open started, last first
}

// builtinTypes are the types of a Caller given none.
var builtinTypes = sync.OnceValue(calltypes.Default)

func (c *Caller) types() *calltypes.Registry {
	if c.Types == nil {
		return builtinTypes()
	}
	return c.Types
}

// DefaultTimeout bounds a call given no deadline: an endpoint that never
// answers, or trickles its answer a byte at a time, holds a call no
// longer.
const DefaultTimeout = 2 * time.Minute

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
	// Image, when set, is carried by the call's user message after its
	// text (the page's screenshot, say): priced by the deployment
	// model's rule for images and reserved with the rest. Its Detail ""
	// is the type's.
	Image *calltypes.Image
}

// Call runs one call of the typed call type t with in as its input, and
// returns the answer as the type's Go value: the one value its parser
// made of the answer.
func Call[In, Out any](ctx context.Context, c *Caller, t calltypes.Typed[In, Out], in In, o CallOptions) (Out, Report, error) {
	var zero Out
	input, err := json.Marshal(in)
	if err != nil {
		return zero, Report{}, fmt.Errorf("llm: %s input: %w", t.Name(), err)
	}
	p, rep, err := c.call(ctx, t.Name(), input, o)
	if err != nil {
		return zero, rep, err
	}
	out, ok := p.value.(Out)
	if !ok {
		return zero, rep, fmt.Errorf("llm: the %s type's parser gives a %T, not the %T its typed name promises: register it with calltypes.JSONParser[%T]", t.Name(), p.value, zero, zero)
	}
	return out, rep, nil
}

// Call runs one call of the named type, for types known only by name,
// such as a config's. The input is JSON, checked by the type's Input
// first (a misfit is a *calltypes.InputError, with nothing reserved or
// sent), then written as the user message by the type's Message, or sent
// as it is when the type has none. The answer is its JSON, once the
// type's parser has taken it. The typed Call is the Go-typed way in.
func (c *Caller) Call(ctx context.Context, typeName string, input json.RawMessage, o CallOptions) (json.RawMessage, Report, error) {
	p, rep, err := c.call(ctx, typeName, input, o)
	if err != nil {
		return nil, rep, err
	}
	out, err := p.json()
	if err != nil {
		return nil, rep, fmt.Errorf("llm: the %s answer as JSON: %w", typeName, err)
	}
	return out, rep, nil
}

// call is the pipeline of one call: the type and its input, the request
// sent (and sent again where a fallback or a truncation retry says so),
// the answer parsed (with one repair), and what it spent counted.
func (c *Caller) call(ctx context.Context, typeName string, input json.RawMessage, o CallOptions) (parsed, Report, error) {
	t, in, err := c.typeFor(typeName, input, o)
	if err != nil {
		return parsed{}, Report{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, positiveOr(c.Timeout, DefaultTimeout))
		defer cancel()
	}
	c.count(t.Name, func(s *TypeStats) { s.Calls++ })
	rep := Report{Type: t.Name, N: max(1, t.N)}
	req, text, err := c.ask(ctx, t, c.content(t, in, o), o, &rep)
	var p parsed
	if err == nil {
		p, err = c.parse(ctx, req, text, o, &rep)
	}
	c.settle(rep)
	return p, rep, err
}

// typeFor is the registered type of a call, with the call's priority,
// and its input as the request will hold it. An input the type does not
// take is refused before anything is reserved or sent: no tokens go to a
// request that cannot be right.
func (c *Caller) typeFor(typeName string, input json.RawMessage, o CallOptions) (calltypes.Type, json.RawMessage, error) {
	t, ok := c.types().Lookup(typeName)
	if !ok {
		return t, nil, fmt.Errorf("llm: unknown call type %q", typeName)
	}
	if !json.Valid(input) {
		return t, nil, &calltypes.InputError{Type: t.Name, Problem: "is not JSON: give one JSON value"}
	}
	// Compacted and escaped as encoding/json writes a value, so that an
	// input reads the same to the model whichever Call it came through.
	in, err := json.Marshal(input)
	if err != nil {
		return t, nil, err
	}
	if err := t.CheckInput(in); err != nil {
		return t, nil, err
	}
	if o.Priority != "" {
		t.Priority = o.Priority
	}
	return t, in, nil
}

// ask sends the call's request and returns the one that was answered,
// with the answer's text. The request goes to the pool the call is routed
// to; when the primary pool cannot serve it in time, to the fallback
// pool; and, under RetryTruncated, once more with twice the cap when its
// answer was cut.
func (c *Caller) ask(ctx context.Context, t calltypes.Type, in content, o CallOptions, rep *Report) (*request, string, error) {
	rt := c.routeOf(t)
	if rt.fallback {
		c.countFallback(t.Name, true)
	}
	req := rt.request(t, in.msgs, in.images, in.tier, rep)
	pctx, cancel := rt.primaryContext(ctx)
	text, err := c.exchange(pctx, req, o, rep)
	cancel()
	if err != nil && req.tier != "" && tierRefused(err) {
		// Once, on the default tier: the model behind the pool lacks the
		// tier, which no retry of the same request changes.
		c.count(t.Name, func(s *TypeStats) { s.TierFallbacks++ })
		rep.TierFallback, rep.Retries = req.tier, rep.Retries+1
		req = req.onDefaultTier()
		in.tier = ""
		text, err = c.exchange(ctx, req, o, rep)
	}
	if err != nil && rt.canFallBack(ctx, err) {
		// Degrade before drop: the primary pool cannot serve this call in
		// time; the fallback pool can, through the same parser.
		rt.fallBack()
		c.countFallback(t.Name, false)
		rep.Retries++
		req = rt.request(t, in.msgs, in.images, in.tier, rep)
		text, err = c.exchange(ctx, req, o, rep)
	}
	var tr *TruncatedError
	var rtr *ReasoningTruncatedError
	if (errors.As(err, &tr) || errors.As(err, &rtr)) && c.Truncation == RetryTruncated {
		// Once, with twice the cap: the answer is worth more than its
		// tokens, but the cap stays a property of the type.
		req = req.withCap(min(2*req.cap, c.types().ModelLimit()))
		rep.MaxTokens = req.cap
		rep.Retries++
		text, err = c.exchange(ctx, req, o, rep)
	}
	return req, text, err
}

// exchange puts one request to the model: priced and held to the
// allowance, sent, and its answer read. It adds what the request did to
// rep.
func (c *Caller) exchange(ctx context.Context, req *request, o CallOptions, rep *Report) (string, error) {
	call, err := reserve(req, o, rep.TokensReserved)
	if err != nil {
		return "", err
	}
	send, err := c.sender()
	if err != nil {
		return "", err
	}
	res, r, err := send.send(ctx, req, call)
	rep.add(r) // the retries and 429s count even when the request failed
	if err != nil {
		return "", err
	}
	return c.read(req, res, rep)
}

// positiveOr is d, or def when d is not positive.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
