package azuresim

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// maxConfig bounds what LoadConfig reads: a deployments file is a page.
const maxConfig = 1 << 20

// LoadConfig reads a deployments file. Every problem is reported as
// file:line: field: what is wrong.
func LoadConfig(file string) (Config, error) {
	data, err := yamlconf.ReadFile(file, maxConfig)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(file, data)
}

// ParseConfig decodes and checks a deployments file held in memory; file is
// only used in error messages.
func ParseConfig(file string, data []byte) (Config, error) {
	var c Config
	doc, err := yamlconf.Decode(file, data, &c)
	if err != nil {
		return Config{}, err
	}
	if err := c.check(doc.Errorf); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks a Config built in code or from flags.
func (c Config) Validate() error {
	return c.check(func(field, format string, args ...any) error {
		return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	})
}

type errorf func(field, format string, args ...any) error

func (c Config) check(bad errorf) error {
	if c.Window < 0 || (c.Window > 0 && c.Window < 60*time.Millisecond) {
		return bad("window", "%v is too short: the 1 s request window would be under a millisecond (use at least 60ms)", c.Window)
	}
	switch c.Refund.normal() {
	case "", Hold, Refund:
	default:
		return bad("refund", "%q is not a refund policy: use hold or refund", c.Refund)
	}
	if err := c.Faults.check("faults", bad); err != nil {
		return err
	}
	pools := map[string]bool{}
	for i, p := range c.Pools {
		f := fmt.Sprintf("pools[%d]", i)
		switch {
		case p.Name == "":
			return bad(f+".name", "a pool needs a name")
		case pools[p.Name]:
			return bad(f+".name", "pool %q is declared twice", p.Name)
		case p.TPM <= 0:
			return bad(f+".tpm", "pool %q needs a token limit above zero", p.Name)
		case p.RPM < 0:
			return bad(f+".rpm", "must not be negative")
		}
		pools[p.Name] = true
	}
	resources := c.allResources()
	if len(resources) == 0 {
		return bad("deployments", "no deployments: declare at least one")
	}
	names := map[string]bool{}
	places := map[string]string{}
	// A quota pool is one count, so its members must count it alike.
	type member struct {
		name  string
		rules [2]WindowRule
	}
	pooled := map[string]member{}
	for ri, r := range resources {
		rf := fmt.Sprintf("resources[%d]", ri)
		if r.Name == "default" && len(c.Deployments) > 0 {
			rf = "deployments"
		}
		if r.Name == "" {
			return bad(rf+".name", "a resource needs a name")
		}
		if names[r.Name] {
			return bad(rf+".name", "resource %q is declared twice", r.Name)
		}
		names[r.Name] = true
		if r.PathPrefix != "" && (!strings.HasPrefix(r.PathPrefix, "/") || strings.HasSuffix(r.PathPrefix, "/")) {
			return bad(rf+".path_prefix", "%q must start with / and not end with one, as /res-a", r.PathPrefix)
		}
		place := r.Addr + " " + r.PathPrefix
		if other, ok := places[place]; ok {
			return bad(rf+".path_prefix", "resources %q and %q are served at the same address and path prefix", other, r.Name)
		}
		places[place] = r.Name
		deps := map[string]bool{}
		for di, d := range r.Deployments {
			df := fmt.Sprintf("%s.deployments[%d]", rf, di)
			if rf == "deployments" {
				df = fmt.Sprintf("deployments[%d]", di)
			}
			if d.Name == "" {
				return bad(df+".name", "a deployment needs a name")
			}
			if deps[d.Name] {
				return bad(df+".name", "deployment %q is declared twice in resource %q", d.Name, r.Name)
			}
			deps[d.Name] = true
			if err := d.check(df, pools, bad); err != nil {
				return err
			}
			d.Region = cmp.Or(d.Region, r.Region) // as New fills it in
			key := poolKey(d)
			if key == "" {
				continue
			}
			rules := [2]WindowRule{cmp.Or(d.RequestWindows, FixedWindow), cmp.Or(d.TokenWindow, FixedWindow)}
			first, ok := pooled[key]
			switch {
			case !ok:
				pooled[key] = member{d.Name, rules}
			case first.rules[0] != rules[0]:
				return bad(df+".request_windows", "deployment %q shares quota pool %q with %q, which counts its request windows %s: a pool is one count, so its members must agree", d.Name, key, first.name, first.rules[0])
			case first.rules[1] != rules[1]:
				return bad(df+".token_window", "deployment %q shares quota pool %q with %q, which counts its token window %s: a pool is one count, so its members must agree", d.Name, key, first.name, first.rules[1])
			}
		}
	}
	return nil
}

func (d Deployment) check(f string, pools map[string]bool, bad errorf) error {
	switch {
	case d.TPM <= 0:
		return bad(f+".tpm", "deployment %q needs a token limit (tpm) above zero", d.Name)
	case d.RPM < 0:
		return bad(f+".rpm", "must not be negative")
	case d.OutputTokens < 0:
		return bad(f+".output_tokens", "must not be negative")
	case d.DefaultMaxTokens < 0:
		return bad(f+".default_max_tokens", "must not be negative")
	case d.Pool != "" && !pools[d.Pool]:
		return bad(f+".pool", "pool %q is not declared under pools", d.Pool)
	case d.ImageAdmission < 0:
		return bad(f+".image_admission", "must not be negative (0 charges each image its published token count)")
	case d.CacheIdle < 0:
		return bad(f+".cache_idle", "must not be negative (0 is the default, %v)", DefaultCacheIdle)
	}
	for i, t := range d.ServiceTiers {
		switch t {
		case tierDefault, tierFlex, tierPriority:
		default:
			return bad(fmt.Sprintf("%s.service_tiers[%d]", f, i), "%q is not a service tier a deployment takes: use flex, priority, or default for neither", t)
		}
	}
	for e, n := range d.ReasoningTokens {
		if _, ok := defaultReasoning[e]; !ok {
			return bad(f+".reasoning_tokens", "%q is not a reasoning effort: use minimal, low, medium or high", e)
		}
		if n < 0 {
			return bad(f+".reasoning_tokens."+e, "must not be negative")
		}
	}
	switch d.Type {
	case "", "standard", "global-standard", "data-zone", "provisioned":
	default:
		return bad(f+".type", "%q is not a deployment type: use standard, global-standard, data-zone or provisioned", d.Type)
	}
	if d.Faults != nil {
		if err := d.Faults.check(f+".faults", bad); err != nil {
			return err
		}
	}
	for _, w := range []struct {
		field string
		rule  WindowRule
	}{{"request_windows", d.RequestWindows}, {"token_window", d.TokenWindow}} {
		switch w.rule {
		case "", FixedWindow, SlidingWindow:
		default:
			return bad(f+"."+w.field, "%q is not a window rule: use fixed or sliding", w.rule)
		}
	}
	switch {
	case !(d.EstimateScale >= 0 && d.EstimateScale <= maxEstimateScale):
		return bad(f+".estimate_scale", "%v must be above 0 and at most %d (1, the default, charges the estimate as it is)", d.EstimateScale, maxEstimateScale)
	case !(d.EstimateNoise >= 0 && d.EstimateNoise <= 1):
		return bad(f+".estimate_noise", "%v must be between 0 and 1", d.EstimateNoise)
	case d.DispatchDelay < 0:
		return bad(f+".dispatch_delay", "must not be negative")
	case !(d.DispatchJitter >= 0 && d.DispatchJitter <= 1):
		return bad(f+".dispatch_jitter", "%v must be between 0 and 1", d.DispatchJitter)
	case !(d.DispatchTail >= 0 && d.DispatchTail <= 3):
		return bad(f+".dispatch_tail", "%v must be between 0 and 3 (the spread of a lognormal: 1 puts the 99th percentile at 10 times the median)", d.DispatchTail)
	case d.DispatchMax < 0:
		return bad(f+".dispatch_max", "must not be negative")
	}
	for i, a := range d.Adjustments {
		af := fmt.Sprintf("%s.adjustments[%d]", f, i)
		if err := checkAdjustment(a.Factor, a.For, af, bad); err != nil {
			return err
		}
		if a.At < 0 {
			return bad(af+".at", "must not be negative")
		}
	}
	return nil
}

func checkAdjustment(factor float64, d time.Duration, f string, bad errorf) error {
	if !(factor > 0 && factor <= 1) {
		return bad(f+".factor", "%v: an adjustment lowers the limit, so the factor must be above 0 and at most 1", factor)
	}
	if d <= 0 {
		return bad(f+".for", "an adjustment needs a duration above zero")
	}
	return nil
}

func (fl Faults) check(f string, bad errorf) error {
	switch {
	case fl.Latency < 0:
		return bad(f+".latency", "must not be negative")
	case fl.LatencyPerToken < 0:
		return bad(f+".latency_per_token", "must not be negative")
	case !(fl.Jitter >= 0 && fl.Jitter <= 1):
		return bad(f+".jitter", "%v must be between 0 and 1", fl.Jitter)
	case !(fl.ErrorRate >= 0 && fl.ErrorRate <= 1):
		return bad(f+".error_rate", "%v must be between 0 and 1", fl.ErrorRate)
	case !(fl.DropRate >= 0 && fl.DropRate <= 1):
		return bad(f+".drop_rate", "%v must be between 0 and 1", fl.DropRate)
	}
	return nil
}

// allResources returns the declared resources with the shorthand
// deployments folded into a resource named "default".
func (c Config) allResources() []Resource {
	rs := c.Resources
	if len(c.Deployments) > 0 {
		rs = append([]Resource{{Name: "default", Deployments: c.Deployments}}, rs...)
	}
	return rs
}
