package budget

import "strings"

// DefaultRPM returns the request limit that comes with tpm tokens per minute
// of quota for model: Azure sells quota in units that bundle both. Chat
// models get 6 RPM per 1,000 TPM; the reasoning models have their own
// ratios (o1: 1 per 6,000; o3 and o4-mini: 1 per 1,000; o1-mini, o3-mini
// and o3-pro: 1 per 10,000).
func DefaultRPM(model string, tpm int64) int64 {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "o1-mini"), strings.HasPrefix(m, "o3-mini"), strings.HasPrefix(m, "o3-pro"):
		return max(1, tpm/10000)
	case strings.HasPrefix(m, "o1"):
		return max(1, tpm/6000)
	case strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4-mini"):
		return max(1, tpm/1000)
	}
	return max(1, tpm*6/1000)
}
