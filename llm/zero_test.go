package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm"
)

// TestZeroValues: a Caller declared as a zero value knows the built-in
// types and fails a call at once for want of a way to send it; a
// Dispatcher no constructor made says so. Neither panics.
func TestZeroValues(t *testing.T) {
	ctx := context.Background()
	var c llm.Caller
	_, _, err := c.Call(ctx, "yes-no", json.RawMessage(`{"question":"Is the order paid?","goal":"Pay order 7"}`), llm.CallOptions{})
	if err == nil || !strings.Contains(err.Error(), "no dispatcher") {
		t.Errorf("a zero Caller's call = %v, want an error naming the missing dispatcher", err)
	}
	var d llm.Dispatcher
	if _, _, err := d.Chat(ctx, budget.Call{Tokens: 1}, openai.ChatCompletionNewParams{}); err == nil || !strings.Contains(err.Error(), "NewDispatcher") {
		t.Errorf("a zero Dispatcher's Chat = %v", err)
	}
	if _, _, err := d.Respond(ctx, budget.Call{Tokens: 1}, responses.ResponseNewParams{}); err == nil || !strings.Contains(err.Error(), "NewDispatcher") {
		t.Errorf("a zero Dispatcher's Respond = %v", err)
	}
}

// TestASenderChangedAfterTheFirstCallIsRefused: the first call fixes how a
// caller sends; a Cassette or Dispatcher set after it would be ignored, so
// the next call is refused, naming the field.
func TestASenderChangedAfterTheFirstCallIsRefused(t *testing.T) {
	ctx := context.Background()
	args := json.RawMessage(`{"question":"Is the order paid?","goal":"Pay order 7"}`)
	var c llm.Caller
	if _, _, err := c.Call(ctx, "yes-no", args, llm.CallOptions{}); err == nil {
		t.Fatal("a caller with no way to send answered")
	}
	c.Cassette = llm.NewCassette(io.Discard)
	_, _, err := c.Call(ctx, "yes-no", args, llm.CallOptions{})
	if err == nil || !strings.Contains(err.Error(), "Caller.Cassette changed after the first call") {
		t.Errorf("a call after the cassette changed = %v, want an error naming Caller.Cassette", err)
	}
}
