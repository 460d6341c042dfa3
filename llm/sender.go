package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/headroom-agent/headroom/budget"
)

// A sender puts one request to the model, placed as call, and returns the
// answer with what the request did (its report counts even when it
// failed). The three are interchangeable: live sends through the
// dispatcher; recording does the same and appends the exchange to a
// cassette; replaying answers from a cassette, with no budget and no
// network. The caller chooses one when it makes its first call.
type sender interface {
	send(ctx context.Context, req *request, call budget.Call) (*openai.ChatCompletion, Report, error)
}

// sender is the caller's sender, chosen on its first call from what it
// was given: a cassette to replay, a dispatcher to send through, and a
// cassette to record to. Set once, it stays: a Dispatcher or Cassette
// changed after the first call is refused, naming the field, rather than
// silently ignored.
func (c *Caller) sender() (sender, error) {
	c.senderOnce.Do(func() {
		c.sentWith = sentWith{c.Dispatcher, c.Cassette}
		switch {
		case c.Cassette.Replaying():
			c.send = replaying{c.Cassette}
		case c.Dispatcher == nil:
			c.send = nowhere{}
		case c.Cassette != nil:
			c.send = recording{live{c.Dispatcher}, c.Cassette}
		default:
			c.send = live{c.Dispatcher}
		}
	})
	switch {
	case c.Dispatcher != c.sentWith.dispatcher:
		return nil, errors.New("llm: Caller.Dispatcher changed after the first call; a caller sends the way its first call chose: make a new Caller")
	case c.Cassette != c.sentWith.cassette:
		return nil, errors.New("llm: Caller.Cassette changed after the first call; a caller sends the way its first call chose: make a new Caller")
	}
	return c.send, nil
}

// sentWith is what a caller's first call chose its sender from.
type sentWith struct {
	dispatcher *Dispatcher
	cassette   *Cassette
}

// live sends through the dispatcher: reserved, routed and settled by the
// budget.
type live struct{ d *Dispatcher }

func (s live) send(ctx context.Context, req *request, call budget.Call) (*openai.ChatCompletion, Report, error) {
	res, r, err := s.d.Chat(ctx, call, req.params)
	if r.TokensReserved > 0 {
		// Priced into the reservation; a cassette's record keeps it.
		r.Images, r.ImageTokens = len(req.images), req.imageTokens()
	}
	return res, r, err
}

// recording sends live and appends each answered exchange to a cassette,
// scrubbed of secrets.
type recording struct {
	live
	cassette *Cassette
}

func (s recording) send(ctx context.Context, req *request, call budget.Call) (*openai.ChatCompletion, Report, error) {
	res, r, err := s.live.send(ctx, req, call)
	if err != nil {
		return nil, r, err
	}
	body, err := req.body()
	if err != nil {
		return nil, r, fmt.Errorf("llm: cassette: %w", err)
	}
	x := Exchange{Report: r, Key: requestKey(s.cassette.scrub(body)), Request: body, Response: compact([]byte(res.RawJSON()))}
	x.Type, x.MaxTokens, x.N = req.t.Name, req.cap, req.n()
	if err := s.cassette.record(x); err != nil {
		return nil, r, fmt.Errorf("llm: cassette: %w", err)
	}
	return res, r, nil
}

// replaying answers from a cassette what was recorded for the same
// request, with the report recorded beside it; a cassette that records
// too writes the exchange again, byte for byte.
type replaying struct{ cassette *Cassette }

func (s replaying) send(ctx context.Context, req *request, _ budget.Call) (*openai.ChatCompletion, Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, Report{}, err
	}
	body, err := req.body()
	if err != nil {
		return nil, Report{}, fmt.Errorf("llm: replay %s: %w", req.t.Name, err)
	}
	x, err := s.cassette.answer(req.t.Name, body)
	if err != nil {
		return nil, Report{}, fmt.Errorf("llm: replay %s: %w", req.t.Name, err)
	}
	var res openai.ChatCompletion
	if err := json.Unmarshal(x.Response, &res); err != nil {
		return nil, Report{}, fmt.Errorf("llm: replay %s: the recorded response does not parse: %w", req.t.Name, err)
	}
	if err := s.cassette.record(x); err != nil {
		return nil, Report{}, fmt.Errorf("llm: cassette: %w", err)
	}
	return &res, x.Report, nil
}

// nowhere is a caller with neither a dispatcher nor a cassette to replay.
type nowhere struct{}

func (nowhere) send(context.Context, *request, budget.Call) (*openai.ChatCompletion, Report, error) {
	return nil, Report{}, errors.New("llm: no dispatcher and no cassette to replay")
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
