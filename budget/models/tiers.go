package models

import "strings"

// Service tiers a request may ask for beside the default one.
const (
	TierFlex     = "flex"
	TierPriority = "priority"
)

// tierModels are the model name prefixes Azure offers each tier on, from
// its flex processing and priority processing pages (2026). Flex runs on
// Global Standard deployments only; a request for a tier the model lacks
// is answered 400. The simulator keeps a table of its own; a test checks
// they agree.
var tierModels = map[string][]string{
	TierFlex:     {"o3", "o4-mini", "gpt-5"},
	TierPriority: {"gpt-4.1", "gpt-5", "o3", "o4-mini"},
}

// TakesTier reports whether model is offered tier ("" and "default"
// always are).
func TakesTier(model, tier string) bool {
	if tier == "" || tier == "default" || tier == "auto" {
		return true
	}
	m := strings.ToLower(strings.TrimSpace(model))
	for _, p := range tierModels[tier] {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// TierNeedsGlobal reports a tier Azure serves on Global Standard
// deployments only.
func TierNeedsGlobal(tier string) bool { return tier == TierFlex }

// TierModels lists the model name prefixes Azure offers tier on.
func TierModels(tier string) []string { return append([]string(nil), tierModels[tier]...) }
