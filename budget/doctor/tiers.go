package doctor

import (
	"fmt"
	"slices"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
)

// serviceTiers: a call type (or a priority class) that asks for a tier
// its deployments do not offer has every call refused with a 400 and sent
// again on the default tier: a request spent for nothing on each call.
// Flex runs on Global Standard deployments only, and on a few models.
func (c *checker) serviceTiers() {
	asks := map[string][]string{} // tier → what asks for it
	for _, name := range sortedKeys(c.f.CallTypes) {
		if t := c.f.CallTypes[name].ServiceTier; t != "" {
			asks[t] = append(asks[t], "call type "+name)
		}
	}
	for _, class := range []calltypes.Priority{calltypes.Interactive, calltypes.Background} {
		if t := c.f.ServiceTiers[class]; t != "" {
			asks[t] = append(asks[t], "the "+string(class)+" class")
		}
	}
	for _, tier := range sortedKeys(asks) {
		var lacking []*budget.Deployment
		var why []string
		for _, d := range c.cfg.Pools()[budget.DefaultPool] {
			switch {
			case !models.TakesTier(d.Model, tier):
				lacking = append(lacking, d)
				why = append(why, fmt.Sprintf("%s serves %s, which Azure does not offer %s on", d.Name, d.Model, tier))
			case models.TierNeedsGlobal(tier) && d.Type != budget.TypeGlobalStandard:
				lacking = append(lacking, d)
				why = append(why, fmt.Sprintf("%s is a %s deployment, and %s runs on Global Standard only", d.Name, show(d.Type), tier))
			}
		}
		if len(lacking) == 0 {
			continue
		}
		slices.Sort(why)
		c.add(Warning, CheckServiceTier, names(lacking),
			fmt.Sprintf("%s asks for the %s tier, which %d of the default pool's deployments do not offer (%s): each such call is refused with a 400 and sent again on the default tier, one request more every call.",
				list(asks[tier]), tier, len(lacking), list(why)),
			fmt.Sprintf("serve those calls from a Global Standard deployment of a model with %s (%s), or leave service_tier out", tier, list(models.TierModels(tier))))
	}
}
