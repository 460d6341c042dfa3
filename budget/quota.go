package budget

import "strings"

// quotaUnit is what one unit of Azure quota holds for a model family, as
// the client believes Azure sells it: rpm requests per minute come with
// every tpm tokens per minute.
type quotaUnit struct {
	family   string // model name prefix, lower case; "" for every other model
	tpm, rpm int64
}

// quotaUnits are the families with their own ratio, longest prefix first
// where one prefix holds another ("o1-mini" before "o1"). Every other
// model is a chat model.
var quotaUnits = []quotaUnit{
	{"o1-mini", 10_000, 1},
	{"o3-mini", 10_000, 1},
	{"o3-pro", 10_000, 1},
	{"o1", 6_000, 1},
	{"o3", 1_000, 1},
	{"o4-mini", 1_000, 1},
}

// chatUnit is the ratio of chat models: 6 RPM per 1,000 TPM.
var chatUnit = quotaUnit{"", 1_000, 6}

// DefaultRPM returns the request limit that comes with tpm tokens per minute
// of quota for model: Azure sells quota in units that bundle both. Chat
// models get 6 RPM per 1,000 TPM; the reasoning models have their own
// ratios (o1: 1 per 6,000; o3 and o4-mini: 1 per 1,000; o1-mini, o3-mini
// and o3-pro: 1 per 10,000).
func DefaultRPM(model string, tpm int64) int64 {
	u := chatUnit
	m := strings.ToLower(model)
	for _, q := range quotaUnits {
		if strings.HasPrefix(m, q.family) {
			u = q
			break
		}
	}
	return max(1, tpm*u.rpm/u.tpm)
}

// QuotaFamilies lists the model name prefixes DefaultRPM gives a ratio of
// their own; every other model gets the chat models' ratio.
func QuotaFamilies() []string {
	out := make([]string, len(quotaUnits))
	for i, q := range quotaUnits {
		out[i] = q.family
	}
	return out
}
