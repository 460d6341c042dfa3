// Package fleet runs a cold-start fleet: many browser agents' worth of
// callers, split over several OS processes that share one Redis, all
// starting in the same second against three deployments of unequal quota
// with demand above supply, and compares routing strategies side by side.
//
// The calls are the ones the product sends: the call types of
// calltypes.AgentMix, weighed as it weighs them, each with its shipped cap
// and n (calltypes.Default), its system prompt, and its example input
// (calltypes.ExampleInput, a shop's search page of about 7,000
// characters) as the user message. The headroom strategy reserves what
// llm.Caller reserves for such a call (llm.Estimate).
package fleet

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/openai/openai-go/v3"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// kind is one call type of the mix as it is sent.
type kind struct {
	name      string
	weight    int // calls of the type in the mix
	msgs      []tokens.Message
	maxTokens int64
	n         int64
	cost      int64 // what the product reserves for the call
}

// kinds is the agent mix of the shipped registry, one kind per type.
type kinds []kind

// agentKinds builds the mix from calltypes.AgentMix and calltypes.Default.
func agentKinds() (kinds, error) {
	reg := calltypes.Default()
	var out kinds
	for _, s := range calltypes.AgentMix() {
		t, ok := reg.Lookup(s.Type)
		if !ok {
			return nil, fmt.Errorf("%s is not a registered call type", s.Type)
		}
		in, ok := calltypes.ExampleInput(s.Type)
		if !ok {
			return nil, fmt.Errorf("no example input for %s", s.Type)
		}
		user, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		k := kind{
			name: t.Name, weight: s.Calls, maxTokens: t.MaxTokens, n: max(1, t.N),
			msgs: []tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: string(user)}},
		}
		k.cost = llm.Estimate(k.msgs, k.maxTokens, k.n)
		out = append(out, k)
	}
	return out, nil
}

// pick draws a kind by its weight in the mix.
func (ks kinds) pick(rng *rand.Rand) kind {
	total := 0
	for _, k := range ks {
		total += k.weight
	}
	n := rng.IntN(total)
	for _, k := range ks {
		if n < k.weight {
			return k
		}
		n -= k.weight
	}
	return ks[0]
}

// params is the call's chat request; the model is set per attempt.
func (k kind) params() openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{MaxTokens: openai.Int(k.maxTokens), N: openai.Int(k.n)}
	for _, m := range k.msgs {
		if m.Role == "system" {
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		} else {
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	return p
}
