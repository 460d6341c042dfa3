package azuresim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Service tiers a call may ask for. auto and default are served alike,
// on the deployment's own terms; flex (slower, cheaper) and priority
// (faster, dearer) only on the models that offer them.
//
// The simulator does not give tiers quotas of their own: a flex or a
// priority call counts against the same deployment windows as a default
// one.
const (
	tierAuto     = "auto"
	tierDefault  = "default"
	tierFlex     = "flex"
	tierPriority = "priority"
)

// tierModels are the models that take flex or priority, by name without
// a version date. It follows Azure's published model lists as of 2026;
// a deployment's service_tiers overrides it.
var tierModels = map[string][]string{
	"o3":           {tierFlex, tierPriority},
	"o4-mini":      {tierFlex, tierPriority},
	"gpt-5":        {tierFlex, tierPriority},
	"gpt-5-mini":   {tierFlex, tierPriority},
	"gpt-5-nano":   {tierFlex, tierPriority},
	"gpt-4.1":      {tierPriority},
	"gpt-4.1-mini": {tierPriority},
	"gpt-4.1-nano": {tierPriority},
}

// versionDate is the date a model name may end in, as gpt-4.1-2025-04-14.
var versionDate = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`)

// modelTiers lists the tiers beyond default that model takes.
func modelTiers(model string) []string {
	m := versionDate.ReplaceAllString(strings.ToLower(strings.TrimSpace(model)), "")
	return tierModels[m]
}

// tiers are the tiers beyond default that d takes: its configured list
// (where [default] says none), else its model's.
func (d *deployment) tiers() []string {
	if len(d.cfg.ServiceTiers) == 0 {
		return modelTiers(d.cfg.Model)
	}
	var out []string
	for _, t := range d.cfg.ServiceTiers {
		if t != tierDefault && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// checkTier answers 400 to a service_tier that is not one, or that the
// deployment's model does not take, and returns the tier served.
func (c *call) checkTier(w http.ResponseWriter, tier *string) (string, bool) {
	if tier == nil {
		return tierDefault, true
	}
	switch *tier {
	case tierAuto, tierDefault:
		return tierDefault, true
	case tierFlex, tierPriority:
	default:
		badRequest(w, "service_tier", "Invalid value for 'service_tier': %q is not one of 'auto', 'default', 'flex', 'priority'.", *tier)
		return "", false
	}
	if !slices.Contains(c.d.tiers(), *tier) {
		model := c.d.cfg.Model
		if model == "" {
			model = c.d.cfg.Name
		}
		supported := append([]string{tierAuto, tierDefault}, c.d.tiers()...)
		badRequestCode(w, "service_tier", "unsupported_value",
			fmt.Sprintf("The model '%s' does not support the '%s' service tier. Supported values are: %s.", model, *tier, quoteList(supported)))
		return "", false
	}
	return *tier, true
}
