package azuresim

import (
	"slices"
	"testing"

	"github.com/headroom-agent/headroom/budget/models"
)

// The simulator and the budget client each keep their own table of the
// models Azure offers flex and priority on; they must agree, so that
// budget doctor warns of exactly the calls the simulator refuses.
func TestTierTablesAgree(t *testing.T) {
	names := []string{"gpt-4o", "gpt-4o-mini", "gpt-35-turbo", "o1", "o3-mini", "o3-pro", "gpt-5-chat", "my-model", ""}
	for _, tier := range []string{tierFlex, tierPriority} {
		names = append(names, models.TierModels(tier)...)
	}
	for m := range tierModels {
		names = append(names, m, m+"-2025-04-16", "GPT"+m[min(3, len(m)):])
	}
	for _, m := range names {
		for _, tier := range []string{tierFlex, tierPriority} {
			if sim, client := slices.Contains(modelTiers(m), tier), models.TakesTier(m, tier); sim != client {
				t.Errorf("model %q, tier %s: the simulator serves it %v, the client believes %v", m, tier, sim, client)
			}
		}
	}
}
