// Package models is the table of Azure OpenAI models headroom knows: how
// each takes a chat request (its family and the reasoning efforts it
// accepts) and the unit Azure sells its quota in. The config reads a
// deployment's family and default request limit from it, and llm shapes
// requests by it. The simulator keeps a table of its own (llm/azuresim); a
// test checks the two agree.
package models

import (
	"fmt"
	"strings"
)

// Family is how a model takes a chat request.
type Family string

const (
	// Chat models (gpt-4o, gpt-4.1, gpt-35-turbo, gpt-5-chat) take
	// max_tokens and a temperature, and every completion token is answer.
	Chat Family = "chat"
	// Reasoning models (o1, o3, o3-mini, o3-pro, o4-mini, gpt-5, gpt-5-mini,
	// gpt-5-nano) refuse max_tokens and any temperature but the default;
	// they take max_completion_tokens, which caps reasoning and answer
	// together, and reasoning_effort.
	Reasoning Family = "reasoning"
)

// Info is what headroom knows of a model: its family, the
// reasoning_effort values it accepts (none for a chat model), and the
// unit Azure sells its quota in: RPM requests per minute with every TPM
// tokens per minute.
type Info struct {
	Prefix  string // model name prefix, lower case
	Family  Family
	Efforts []string
	TPM     int64
	RPM     int64
}

// Accepts reports whether the model takes reasoning_effort e.
func (m Info) Accepts(e string) bool {
	for _, x := range m.Efforts {
		if x == e {
			return true
		}
	}
	return false
}

var (
	oEfforts   = []string{"low", "medium", "high"}
	gpt5Effort = []string{"minimal", "low", "medium", "high"}
)

// models is the one table of model families: longest prefix first where
// one prefix holds another ("o3-mini" before "o3", "gpt-5-chat" before
// "gpt-5"). The quota units are Azure's published ones; the gpt-5 family
// has no published unit in the sources this table follows, so it takes
// the chat models' (a deployment's rpm overrides it).
var models = []Info{
	{"o1-mini", Reasoning, nil, 10_000, 1},
	{"o1-preview", Reasoning, nil, 6_000, 1},
	{"o3-mini", Reasoning, oEfforts, 10_000, 1},
	{"o3-pro", Reasoning, oEfforts, 10_000, 1},
	{"o1", Reasoning, oEfforts, 6_000, 1},
	{"o3", Reasoning, oEfforts, 1_000, 1},
	{"o4-mini", Reasoning, oEfforts, 1_000, 1},
	{"gpt-5-chat", Chat, nil, 1_000, 6},
	{"gpt-5", Reasoning, gpt5Effort, 1_000, 6},
	{"gpt-4", Chat, nil, 1_000, 6}, // gpt-4, gpt-4o, gpt-4o-mini, gpt-4.1, gpt-4.1-mini, ...
	{"gpt-35", Chat, nil, 1_000, 6},
	{"gpt-3.5", Chat, nil, 1_000, 6},
}

// unsupported are models whose requests headroom cannot shape: no system
// message and no structured output.
var unsupported = map[string]string{
	"o1-mini":    "o1-mini takes no system message and no JSON schema: deploy o3-mini or o4-mini",
	"o1-preview": "o1-preview takes no system message and no JSON schema: deploy o1, o3 or o4-mini",
}

// chatUnit is the quota unit of a model the table does not know.
var chatUnit = Info{Family: Chat, TPM: 1_000, RPM: 6}

// Lookup finds a model in the table by its name's prefix.
func Lookup(model string) (Info, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, q := range models {
		if strings.HasPrefix(m, q.Prefix) {
			return q, true
		}
	}
	return Info{}, false
}

// Resolve is what headroom knows of a deployment's model: the table's
// entry, or the family the config states for a model the table does not
// know. An unknown model without a stated family is an error, never a
// guess.
func Resolve(model string, stated Family) (Info, error) {
	info, known := Lookup(model)
	if why, ok := unsupported[info.Prefix]; known && ok {
		return info, fmt.Errorf("%s", why)
	}
	switch {
	case stated != "" && stated != Chat && stated != Reasoning:
		return info, fmt.Errorf("%q is not a model family: write chat or reasoning", stated)
	case known && stated != "" && stated != info.Family:
		return info, fmt.Errorf("%s is a %s model, not %s: leave family out", model, info.Family, stated)
	case known:
		return info, nil
	case stated == "" && model != "":
		return info, fmt.Errorf("%q is a model headroom does not know: set family: chat (takes max_tokens and temperature) or family: reasoning (max_completion_tokens, reasoning_effort, no temperature)", model)
	}
	info = chatUnit
	if stated == Reasoning {
		info.Family, info.Efforts = Reasoning, oEfforts
	}
	return info, nil
}

// DefaultRPM returns the request limit that comes with tpm tokens per minute
// of quota for model: Azure sells quota in units that bundle both. Chat
// models get 6 RPM per 1,000 TPM; the reasoning models have their own
// ratios (o1: 1 per 6,000; o3 and o4-mini: 1 per 1,000; o1-mini, o3-mini
// and o3-pro: 1 per 10,000).
func DefaultRPM(model string, tpm int64) int64 {
	u, ok := Lookup(model)
	if !ok {
		u = chatUnit
	}
	return max(1, tpm*u.RPM/u.TPM)
}

// QuotaFamilies lists the model name prefixes DefaultRPM gives a ratio of
// their own; every other model gets the chat models' ratio.
func QuotaFamilies() []string {
	var out []string
	for _, q := range models {
		if q.RPM != chatUnit.RPM || q.TPM != chatUnit.TPM {
			out = append(out, q.Prefix)
		}
	}
	return out
}
