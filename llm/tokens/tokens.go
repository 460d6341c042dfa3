// Package tokens counts tokens the way Azure OpenAI's chat models see them:
// the o200k_base encoding plus the chat format's per-message overhead.
//
// The vocabulary is embedded in the binary, so counting never touches the
// network and works in an offline replay.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Chat-format overhead, from the published counting recipe for the
// gpt-4o family: every message is wrapped in three tokens, a name costs one
// more, and the reply is primed with three.
const (
	PerMessage  = 3
	PerName     = 1
	ReplyPrimer = 3
)

// Message is the part of a chat message that costs tokens.
type Message struct {
	Role    string
	Name    string
	Content string
}

var (
	once  sync.Once
	codec tokenizer.Codec
)

// load builds the codec once; the first use costs a few milliseconds.
func load() tokenizer.Codec {
	once.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err != nil {
			// The encoding is compiled in; failing here means a broken build.
			panic("tokens: o200k_base is not available: " + err.Error())
		}
		c.SetErrorMode(tokenizer.ErrorModeReplace)
		codec = c
	})
	return codec
}

// Count returns the number of o200k_base tokens in s.
func Count(s string) int {
	if s == "" {
		return 0
	}
	n, err := load().Count(s)
	if err != nil {
		// Replace mode maps bad UTF-8 to U+FFFD, so this is unreachable in
		// practice; fall back to the usual four-characters rule.
		return (len(s) + 3) / 4
	}
	return n
}

// Chat returns the prompt tokens of a chat request made of msgs.
func Chat(msgs []Message) int {
	n := ReplyPrimer
	for _, m := range msgs {
		n += PerMessage + Count(m.Role) + Count(m.Content)
		if m.Name != "" {
			n += Count(m.Name) + PerName
		}
	}
	return n
}

// Encode returns the token ids of s.
func Encode(s string) []uint {
	ids, _, _ := load().Encode(s)
	return ids
}

// Decode turns token ids back into text.
func Decode(ids []uint) string {
	s, _ := load().Decode(ids)
	return s
}

// Truncate returns the longest prefix of s that is at most max tokens, and
// whether anything was cut.
func Truncate(s string, max int) (string, bool) {
	if max <= 0 {
		return "", s != ""
	}
	ids := Encode(s)
	if len(ids) <= max {
		return s, false
	}
	return Decode(ids[:max]), true
}
