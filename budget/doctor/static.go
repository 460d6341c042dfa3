package doctor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/config"
)

// quota is one allowance as Azure counts it: a deployment's own, or one
// shared by Standard deployments that budget's config found to be one
// quota under several names (Deployment.QuotaKey).
type quota struct {
	key      string
	tpm, rpm int64
	members  []*budget.Deployment
}

// quotas groups ds by the quota they draw on, in file order, so a shared
// quota is counted once.
func quotas(ds []*budget.Deployment) []*quota {
	var out []*quota
	by := map[string]*quota{}
	for _, d := range ds {
		key := cmp.Or(d.QuotaKey, d.Name)
		q := by[key]
		if q == nil {
			q = &quota{key: key, tpm: cmp.Or(d.QuotaTPM, d.TPM), rpm: cmp.Or(d.QuotaRPM, d.RPM)}
			by[key] = q
			out = append(out, q)
		}
		q.members = append(q.members, d)
	}
	return out
}

// capacity is what a set of deployments allows a minute, a shared quota
// once, and the largest single quota among them.
func capacity(ds []*budget.Deployment) (tpm, rpm int64, largest *quota) {
	for _, q := range quotas(ds) {
		tpm, rpm = tpm+q.tpm, rpm+q.rpm
		if largest == nil || q.tpm > largest.tpm {
			largest = q
		}
	}
	return tpm, rpm, largest
}

func (c *checker) all() []*budget.Deployment {
	out := make([]*budget.Deployment, len(c.cfg.Deployments))
	for i := range c.cfg.Deployments {
		out[i] = &c.cfg.Deployments[i]
	}
	return out
}

// loadWarnings turns config.Load's warnings into findings. The one that
// names a shared quota is left to sharedQuotas, which says what to do:
// budget's config puts it at the quota's second member.
func (c *checker) loadWarnings(ws []budget.Warning) {
	shared := map[string]bool{}
	seen := map[string]int{}
	for i, d := range c.cfg.Deployments {
		if d.QuotaKey == "" || d.QuotaKey == d.Name {
			continue
		}
		if seen[d.QuotaKey]++; seen[d.QuotaKey] == 2 {
			shared[fmt.Sprintf("deployments[%d]", i)] = true
		}
	}
	for _, w := range ws {
		if shared[w.Field] {
			continue
		}
		c.add(Warning, CheckConfig, nil, w.String(), "change what the message names, at its line")
	}
}

// sharedQuotas: Standard deployments of one model in one subscription and
// region are one quota under several names ("five names, one number"),
// which routing across them cannot add to.
func (c *checker) sharedQuotas() {
	for _, q := range quotas(c.all()) {
		if len(q.members) < 2 {
			continue
		}
		var declared int64
		var pools []string
		for _, d := range q.members {
			declared += d.TPM
			if !slices.Contains(pools, d.Pool) {
				pools = append(pools, d.Pool)
			}
		}
		d := q.members[0]
		msg := fmt.Sprintf("%s are Standard deployments of %s in subscription %q, region %q: Azure gives them one quota, %s TPM and %s RPM (the largest declared), not the %s TPM their tpm adds up to. headroom counts them as one, so routing across the %d names buys no throughput.",
			list(names(q.members)), show(d.Model), d.Subscription, d.Region, num(q.tpm), num(q.rpm), num(declared), len(q.members))
		if len(pools) > 1 {
			msg += fmt.Sprintf(" They serve pools %s, so when one is rate-limited so are the others: a fallback on the same quota takes nothing off the primary.", list(quoted(pools)))
		}
		c.add(Warning, CheckSharedQuota, names(q.members), msg,
			"for more throughput, move a deployment to another region or subscription, or to another deployment type (global-standard, data-zone, provisioned), each a quota of its own; otherwise keep one name and drop the rest")
	}
}

// poolVersions: every endpoint in a pool must be the same model at the
// same version. config.Load refuses a pool whose model_version fields
// differ; what it cannot see is a pool whose members leave the version
// out, where Azure upgrading one deployment and not another goes
// unnoticed.
func (c *checker) poolVersions() {
	pools := c.cfg.Pools()
	for _, name := range sortedKeys(pools) {
		ds := pools[name]
		if len(ds) < 2 {
			continue
		}
		var unset []*budget.Deployment
		for _, d := range ds {
			if d.ModelVersion == "" {
				unset = append(unset, d)
			}
		}
		if len(unset) == 0 {
			continue
		}
		c.add(Warning, CheckPoolVersion, names(unset),
			fmt.Sprintf("pool %q routes over %d deployments of %s, and %s set no model_version: nothing stops the pool mixing versions (Azure may upgrade one deployment and not another), and the same call would then behave differently depending on the route.",
				name, len(ds), show(ds[0].Model), list(names(unset))),
			"set model_version on each to the version deployed (the Azure portal or az cognitiveservices account deployment list shows it), so a mix is refused at load; --probe reads what each serves now")
	}
}

// rpmRatios: Azure sells quota in units that bundle requests with
// tokens (budget/models), so an rpm the tpm does not carry is a typo or a
// misunderstanding. Above the unit, the router admits requests Azure will
// refuse on its 1 s and 10 s windows; below it, the requests are left
// unused.
func (c *checker) rpmRatios() {
	for _, d := range c.all() {
		info, known := models.Lookup(d.Model)
		if !known || !publishedUnit(info) {
			continue // nothing to compare with: the rpm is the user's to state
		}
		want := models.DefaultRPM(d.Model, d.TPM)
		unit := fmt.Sprintf("%s RPM per %s TPM", num(info.RPM), num(info.TPM))
		switch {
		case d.RPM > want:
			needTPM := (d.RPM*info.TPM + info.RPM - 1) / info.RPM
			c.add(Warning, CheckRPMRatio, []string{d.Name},
				fmt.Sprintf("%s declares rpm %s with tpm %s, but %s quota comes at %s: %s TPM carries %s RPM. The router paces %s requests a minute (%s per 10 s) where Azure allows %s per 10 s, and the rest draw 429s no token count explains.",
					d.Name, num(d.RPM), num(d.TPM), show(d.Model), unit, num(d.TPM), num(want), num(d.RPM), num(max(1, d.RPM/6)), num(max(1, want/6))),
				fmt.Sprintf("remove rpm (it defaults to %s), or, if the deployment really has %s RPM, its tpm is %s or more: write that", num(want), num(d.RPM), num(needTPM)))
		case d.RPM < want:
			c.add(Info, CheckRPMRatio, []string{d.Name},
				fmt.Sprintf("%s declares rpm %s, below the %s RPM that %s TPM of %s comes with (%s): the router leaves %s requests a minute unused.",
					d.Name, num(d.RPM), num(want), num(d.TPM), show(d.Model), unit, num(want-d.RPM)),
				fmt.Sprintf("remove rpm to use the %s the quota carries, unless other clients share the deployment", num(want)))
		}
	}
}

// publishedUnit reports whether the family table's quota unit for a model
// is Azure's own. The table gives the gpt-5 reasoning models the chat
// models' unit for want of a published one, which an explicit rpm rightly
// overrides.
func publishedUnit(m models.Info) bool {
	return !(m.Family == models.Reasoning && m.RPM*1000 == 6*m.TPM)
}

// globalStandard: a Global Standard deployment is a quota pool apart from
// Standard in the same subscription and region, and Azure routes each of
// its requests to capacity itself. A fleet that routes over several
// Standard or Data Zone deployments may not need to, where data
// residency allows.
func (c *checker) globalStandard() {
	for _, d := range c.cfg.Deployments {
		if d.Type == budget.TypeGlobalStandard {
			return
		}
	}
	var routed []*budget.Deployment
	for _, d := range c.cfg.Pools()[budget.DefaultPool] {
		if d.Type == budget.TypeStandard || d.Type == budget.TypeDataZone {
			routed = append(routed, d)
		}
	}
	if len(routed) < 2 {
		return
	}
	tpm, _, _ := capacity(routed)
	var std, dz int
	for _, d := range routed {
		if d.Type == budget.TypeDataZone {
			dz++
		} else {
			std++
		}
	}
	var kinds []string
	if std > 0 {
		kinds = append(kinds, fmt.Sprintf("%d Standard", std))
	}
	if dz > 0 {
		kinds = append(kinds, fmt.Sprintf("%d Data Zone", dz))
	}
	c.add(Info, CheckGlobalStandard, names(routed),
		fmt.Sprintf("the default pool routes over %s deployments (%s TPM together) and the config has no Global Standard one: a Global Standard deployment is a quota of its own, apart from Standard in the same subscription and region, and Azure routes each request to a datacenter with capacity itself.",
			list(kinds), num(tpm)),
		"if data residency allows processing outside these regions, deploy the model as Global Standard and add it with type: global-standard; it may make the routing unnecessary")
}

// fallbacks: a fallback pool serves what the default pool cannot in time.
// It should at least absorb the loss of the primary's largest quota at
// full load (a region out, or an adjustment), and its warm share of
// calls even while the primary is fine; past that, how much of a whole
// primary outage it absorbs is worth knowing.
func (c *checker) fallbacks() {
	pools := c.cfg.Pools()
	primary := pools[budget.DefaultPool]
	if len(primary) == 0 {
		return
	}
	share := config.DefaultShare // a type's own fallback is kept warm too
	if fb := c.f.Fallback; fb != nil {
		share = fb.ShareOrDefault()
	}
	global := ""
	if fb := c.f.Fallback; fb != nil {
		global = fb.Pool
	}
	types := map[string][]string{}
	for name, o := range c.f.CallTypes {
		if o.Fallback != "" && o.Fallback != global {
			types[o.Fallback] = append(types[o.Fallback], name)
		}
	}
	if global != "" {
		c.fallback(global, nil, pools[global], primary, share)
	}
	for _, pool := range sortedKeys(types) {
		ts := types[pool]
		slices.Sort(ts)
		c.fallback(pool, ts, pools[pool], primary, share)
	}
}

// fallback checks one fallback pool; types, when set, are the call types
// that name it, whose share of the load the config does not say, so its
// findings are infos.
func (c *checker) fallback(pool string, types []string, fb, primary []*budget.Deployment, share float64) {
	if len(fb) == 0 {
		return // config.Load refuses a fallback naming no pool
	}
	ptpm, prpm, largest := capacity(primary)
	ftpm, frpm, _ := capacity(fb)
	cover := min(float64(ftpm)/float64(ptpm), float64(frpm)/float64(prpm))
	who := fmt.Sprintf("the fallback pool %q", pool)
	if types != nil {
		who = fmt.Sprintf("pool %q, the fallback of %s,", pool, list(quoted(types)))
	}
	figures := fmt.Sprintf("%s has %s TPM and %s RPM against the default pool's %s TPM and %s RPM: it can absorb about %s of the primary's full load.",
		who, num(ftpm), num(frpm), num(ptpm), num(prpm), pct(cover))
	if fb[0].Family == models.Reasoning && primary[0].Family != models.Reasoning {
		figures += " Its calls also reserve a reasoning allowance inside their cap, so it serves fewer calls per TPM than the primary."
	}
	sev := func(s Severity) Severity {
		if types != nil {
			return Info
		}
		return s
	}
	warmTPM, warmRPM := share*float64(ptpm), share*float64(prpm)
	switch {
	case float64(ftpm) < warmTPM || float64(frpm) < warmRPM:
		c.add(sev(Warning), CheckFallback, names(fb),
			fmt.Sprintf("%s Its warm share, %s of calls, is about %s TPM and %s RPM when the primary runs full, more than it has, so it is rate-limited while the primary is fine.",
				figures, pct(share), num(int64(warmTPM)), num(int64(warmRPM))),
			fmt.Sprintf("lower fallback.share to %s or less, or give the pool more quota", shareFor(ftpm, frpm, ptpm, prpm)))
	case ftpm < largest.tpm || frpm < largest.rpm:
		c.add(sev(Warning), CheckFallback, names(fb),
			fmt.Sprintf("%s That is less than the primary's largest quota (%s, %s TPM and %s RPM), so losing that one deployment at full load sheds calls the fallback is there to serve.",
				figures, list(names(largest.members)), num(largest.tpm), num(largest.rpm)),
			fmt.Sprintf("give the fallback pool at least %s TPM and %s RPM (the largest primary quota), or %s TPM to carry a whole primary outage; or accept that calls past %s TPM are shed",
				num(largest.tpm), num(largest.rpm), num(ptpm), num(ftpm)))
	case ftpm < ptpm || frpm < prpm:
		c.add(Info, CheckFallback, names(fb),
			figures+fmt.Sprintf(" That covers the loss of the largest primary quota (%s TPM), not an outage of the whole pool.", num(largest.tpm)),
			fmt.Sprintf("to carry a whole primary outage, give the fallback pool %s TPM and %s RPM", num(ptpm), num(prpm)))
	}
}

// shareFor is the largest fallback share a pool of ftpm/frpm can take of a
// primary of ptpm/prpm running full.
func shareFor(ftpm, frpm, ptpm, prpm int64) string {
	s := min(float64(ftpm)/float64(ptpm), float64(frpm)/float64(prpm))
	return strconv.FormatFloat(s, 'g', 2, 64)
}

func names(ds []*budget.Deployment) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// list joins items as a sentence does: a, b and c.
func list(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func show(s string) string {
	if s == "" {
		return "(no model set)"
	}
	return s
}

// num writes n with thousands separators, as the README's figures are.
func num(n int64) string { return thousands.Sprintf("%d", n) }

// thousands groups digits as the README's figures are: 240,000.
var thousands = message.NewPrinter(language.English)

// pct writes a fraction as a whole percentage, or to one decimal below 10%.
func pct(f float64) string {
	if f < 0.1 {
		return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
	}
	return strconv.Itoa(int(math.Round(f*100))) + "%"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
