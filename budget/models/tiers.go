package models

import (
	"regexp"
	"slices"
	"strings"
)

// Service tiers a request may ask for beside the default one.
const (
	TierFlex     = "flex"
	TierPriority = "priority"
)

// tierModels are the models Azure offers each tier on, by name without
// a version date (o3-mini is not o3), from its flex processing and
// priority processing pages (2026). Flex runs on Global Standard
// deployments only; a request for a tier the model lacks is answered
// 400. The simulator keeps a table of its own; a test checks they agree.
var tierModels = map[string][]string{
	TierFlex:     {"o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano"},
	TierPriority: {"o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"},
}

// versionDate is the date a model name may end in: gpt-4.1-2025-04-14.
var versionDate = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`)

// TakesTier reports whether model is offered tier ("", "auto" and
// "default" always are).
func TakesTier(model, tier string) bool {
	if tier == "" || tier == "default" || tier == "auto" {
		return true
	}
	m := versionDate.ReplaceAllString(strings.ToLower(strings.TrimSpace(model)), "")
	return slices.Contains(tierModels[tier], m)
}

// TierNeedsGlobal reports a tier Azure serves on Global Standard
// deployments only.
func TierNeedsGlobal(tier string) bool { return tier == TierFlex }

// TierModels lists the models Azure offers tier on.
func TierModels(tier string) []string { return slices.Clone(tierModels[tier]) }
