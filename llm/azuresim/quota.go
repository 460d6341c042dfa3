package azuresim

import (
	"slices"
	"strings"
)

// The simulator's own table of Azure's quota units. It is kept apart from
// the budget client's (which holds what the client believes Azure does):
// a test checks the two agree, so neither can drift unnoticed.

// unit is what one unit of quota holds: rpm requests per minute come with
// every tpm tokens per minute.
type unit struct{ tpm, rpm int64 }

// familyUnits are the model families Azure sells on other terms than its
// chat models, by model name prefix.
var familyUnits = map[string]unit{
	"o1":         {6_000, 1},
	"o1-preview": {6_000, 1},
	"o1-mini":    {10_000, 1},
	"o3":         {1_000, 1},
	"o3-mini":    {10_000, 1},
	"o3-pro":     {10_000, 1},
	"o4-mini":    {1_000, 1},
}

// chatUnit is every other model's: 6 RPM per 1,000 TPM.
var chatUnit = unit{1_000, 6}

// DefaultRPM is the request limit that comes with tpm of quota for model:
// the ratio of the longest family prefix of its name, else the chat
// models' one, and never less than 1.
func DefaultRPM(model string, tpm int64) int64 {
	m := strings.ToLower(model)
	u, best := chatUnit, -1
	for family, fu := range familyUnits {
		if strings.HasPrefix(m, family) && len(family) > best {
			u, best = fu, len(family)
		}
	}
	return max(1, tpm*u.rpm/u.tpm)
}

// QuotaFamilies lists the model name prefixes DefaultRPM gives a ratio of
// their own; every other model gets the chat models' ratio.
func QuotaFamilies() []string {
	out := make([]string, 0, len(familyUnits))
	for f := range familyUnits {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
