package llm

import (
	"unicode/utf8"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// Estimate is the cost a call reserves: what Azure charges it at
// admission, as far as its rule can be seen from outside. Azure counts
// the prompt from its characters rather than with a tokenizer (a quarter
// token per character, rounded up, plus one a message: a 28-character
// gpt-4o prompt was charged 8 tokens) and adds the answer cap times n,
// whatever the answer then uses. Reserving that and no more is what lets
// a fleet fill an allowance to its margin; the margin covers where the
// rule is off. A tokenizer count would reserve a quarter more than Azure
// charges on JSON prompts such as page snapshots, and waste that
// throughput. The simulator keeps its own copy of the rule; a test checks
// they agree.
func Estimate(msgs []tokens.Message, maxTokens, n int64) int64 {
	var prompt int64
	for _, m := range msgs {
		chars := utf8.RuneCountInString(m.Content) + utf8.RuneCountInString(m.Name)
		prompt += int64(chars+3)/4 + 1
	}
	return prompt + maxTokens*max(1, n)
}
