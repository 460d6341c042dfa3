package doctor

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/headroom-agent/headroom/budget"
)

// probe sends p to every deployment at once and compares what each
// answers with what the config says of it.
func (c *checker) probe(ctx context.Context, p Probe, timeout time.Duration) {
	ds := c.all()
	answers := make([]Answer, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			answers[i], errs[i] = p(pctx, *d)
		})
	}
	wg.Wait()

	now := time.Now()
	pools := c.cfg.Pools()
	drifted := map[string]bool{} // pools with a member whose version is wrong
	type version struct {
		d *budget.Deployment
		v string
	}
	served := map[string][]version{} // by pool
	for i, d := range ds {
		a, err := answers[i], errs[i]
		fb := budget.ParseFeedback(a.Header, now)
		pr := Probed{Deployment: d.Name, Status: a.Status, Model: a.Model,
			LimitTokens: fb.LimitTokens, RemainingTokens: fb.RemainingTokens,
			LimitRequests: fb.LimitRequests, RemainingRequests: fb.RemainingRequests,
			LatencyMS: a.Latency.Milliseconds()}
		if err != nil {
			pr.Error = err.Error()
		}
		c.probed = append(c.probed, pr)
		if !c.answered(d, a, err) {
			continue
		}
		c.limits(d, fb)
		same, v, want := servedAs(d.Model, d.ModelVersion, a.Model)
		switch {
		case a.Status == http.StatusTooManyRequests || a.Model == "" || d.Model == "":
			// Nothing to compare: no body, or no model configured.
		case !same:
			drifted[d.Pool] = true
			c.add(Error, CheckProbeVersion, []string{d.Name},
				fmt.Sprintf("%s answers as model %q, but the config says %s%s: the deployment runs another model.", d.Name, a.Model, d.Model, at(d.ModelVersion)),
				"set model and model_version to what the deployment runs, or point deployment: at the one meant")
		case v != "" && want != "" && v != want:
			drifted[d.Pool] = true
			why := "its calls are answered by another version than the one the config pins"
			if len(pools[d.Pool]) > 1 {
				why = "the pool would answer the same call with another model depending on the route"
			}
			c.add(Error, CheckProbeVersion, []string{d.Name},
				fmt.Sprintf("%s serves version %s (Azure reports %q), but the config says %s version %s: %s.", d.Name, v, a.Model, d.Model, want, why),
				fmt.Sprintf("update the deployment to %s in Azure (and turn off automatic version upgrades), or set model_version: %q and give it a pool of its own until every member matches", want, v))
		case v != "" && want == "":
			c.add(Info, CheckProbeVersion, []string{d.Name},
				fmt.Sprintf("%s serves %s version %s (Azure reports %q); the config sets no model_version.", d.Name, d.Model, v, a.Model),
				fmt.Sprintf("set model_version: %q, so a pool that mixes versions is refused at load", v))
		}
		if same && v != "" {
			served[d.Pool] = append(served[d.Pool], version{d, v})
		}
	}
	// Pool drift no single deployment's version shows: members that set
	// none, serving different ones.
	for _, pool := range sortedKeys(served) {
		vs := served[pool]
		by := map[string][]*budget.Deployment{}
		var order []string
		for _, x := range vs {
			k := strings.ToLower(x.v)
			if by[k] == nil {
				order = append(order, k)
			}
			by[k] = append(by[k], x.d)
		}
		if len(order) < 2 || drifted[pool] {
			continue
		}
		var parts []string
		var all []string
		for _, k := range order {
			parts = append(parts, fmt.Sprintf("%s at %s", list(names(by[k])), k))
			all = append(all, names(by[k])...)
		}
		c.add(Error, CheckProbeVersion, all,
			fmt.Sprintf("pool %q serves more than one version of %s: %s. The same call gets a different model depending on the route.", pool, vs[0].d.Model, strings.Join(parts, "; ")),
			"bring every member to one version in Azure, then set model_version on each so a mix is refused at load")
	}
}

// answered reports whether d gave an answer worth comparing, and adds the
// finding when it did not.
func (c *checker) answered(d *budget.Deployment, a Answer, err error) bool {
	cred := "its Entra ID credential"
	if env := d.Auth.APIKeyEnv; env != "" {
		cred = "the key in $" + env
	}
	said := ""
	if a.Code != "" || a.Message != "" {
		said = fmt.Sprintf(" (%s)", strings.TrimSpace(strings.Trim(a.Code+": "+a.Message, ": ")))
	}
	where := fmt.Sprintf("deployment %q at %s, api-version %s", d.Deployment, d.Resource(), d.APIVersion)
	switch {
	case err != nil:
		c.add(Error, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s could not be probed: %v.", d.Name, err),
			fmt.Sprintf("check that this machine reaches %s (DNS, firewall, private endpoint) and that %s is set", d.Resource(), cred))
		return false
	case a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden:
		c.add(Error, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s refused %s: HTTP %d%s.", d.Name, cred, a.Status, said),
			"put the resource's key (Keys and Endpoint in the Azure portal) in the variable, or for Entra ID give the identity the Cognitive Services OpenAI User role")
		return false
	case a.Status == http.StatusNotFound:
		c.add(Error, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s: %s answers HTTP 404%s.", d.Name, where, said),
			"check the deployment's name as Azure knows it (deployment:), the endpoint and the api_version")
		return false
	case a.Status == http.StatusBadRequest:
		c.add(Error, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s refused a one-token request shaped for a %s model: HTTP 400%s.", d.Name, d.Family, said),
			"set model (or family) to what the deployment runs: a reasoning model takes max_completion_tokens, a chat model max_tokens")
		return false
	case a.Status == http.StatusTooManyRequests:
		c.add(Info, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s was rate-limited when probed (HTTP 429): its quota is in use now; its limit headers are still compared.", d.Name),
			"probe again when the deployment is idle to check its model version")
		return true
	case a.Status < 200 || a.Status > 299:
		c.add(Warning, CheckProbe, []string{d.Name},
			fmt.Sprintf("%s answered HTTP %d%s.", d.Name, a.Status, said),
			"probe again; a deployment that keeps failing opens its breaker for the whole fleet")
		return false
	}
	return true
}

// limits compares the limits d reports with its config. A token limit
// below tpm is the one the router will find in force (an adjustment, or a
// wrong figure); above it, quota the config leaves unused.
func (c *checker) limits(d *budget.Deployment, fb budget.Feedback) {
	switch {
	case fb.LimitTokens < 0:
		c.add(Info, CheckProbeLimit, []string{d.Name},
			fmt.Sprintf("%s reports no x-ratelimit-limit-tokens: neither this check nor the router's feedback can see its limit move.", d.Name),
			"if a gateway (API Management) sits in front, let it pass the x-ratelimit-* headers")
		return
	case fb.LimitTokens < d.TPM:
		c.add(Warning, CheckProbeLimit, []string{d.Name},
			fmt.Sprintf("%s reports x-ratelimit-limit-tokens %s, below its configured tpm %s (%s of it): Azure has lowered the limit for a while (a temporary adjustment), or tpm is wrong.",
				d.Name, num(fb.LimitTokens), num(d.TPM), pct(float64(fb.LimitTokens)/float64(d.TPM))),
			fmt.Sprintf("probe again in a few minutes: if it stays at %s, set tpm: %d (the router uses the lower figure once it reads it, but plans are made on tpm)", num(fb.LimitTokens), fb.LimitTokens))
	case fb.LimitTokens > d.TPM:
		c.add(Info, CheckProbeLimit, []string{d.Name},
			fmt.Sprintf("%s reports x-ratelimit-limit-tokens %s, above its configured tpm %s: the config leaves %s TPM of its quota unused.",
				d.Name, num(fb.LimitTokens), num(d.TPM), num(fb.LimitTokens-d.TPM)),
			fmt.Sprintf("set tpm: %d (and leave rpm out to get the requests that come with it)", fb.LimitTokens))
	}
	// The request limit header is the 10 s window's (RPM/6) as the
	// simulator reports it after Azure; a per-minute figure matches too,
	// since the header is loosely documented.
	if r := fb.LimitRequests; r >= 0 && r != d.RPM && r != max(1, d.RPM/6) {
		c.add(Info, CheckProbeLimit, []string{d.Name},
			fmt.Sprintf("%s reports x-ratelimit-limit-requests %s, which matches neither its rpm %s nor that rpm's 10-second window (%s).", d.Name, num(r), num(d.RPM), num(max(1, d.RPM/6))),
			"set rpm to the deployment's request limit as the Azure portal shows it, or leave it out for the one that comes with tpm")
	}
}

// versionSuffix is the version Azure appends to a model's name in an
// answer: a date (gpt-4o-2024-11-20) or, for older models, four digits
// (gpt-4-0613).
var versionSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{4})$`)

// servedAs reads the model an answer reports against the configured model
// and version: whether it is the same model, the version it reports (""
// when the name carries none, as on older models or the simulator without
// a version), and the version the config asks for (model_version, or one
// written into the model's name).
func servedAs(model, version, reported string) (same bool, served, want string) {
	m, want, r := canon(model), strings.ToLower(strings.TrimSpace(version)), canon(reported)
	if want == "" {
		if loc := versionSuffix.FindStringSubmatchIndex(m); loc != nil {
			m, want = m[:loc[0]], m[loc[2]:loc[3]]
		}
	}
	switch {
	case m == "" || r == "":
		return true, "", want
	case want != "" && r == m+"-"+want:
		return true, want, want // also versions that are not dates: gpt-4 at turbo-2024-04-09
	case r == m:
		return true, "", want
	}
	if loc := versionSuffix.FindStringSubmatchIndex(r); loc != nil && r[:loc[0]] == m {
		return true, r[loc[2]:loc[3]], want
	}
	return false, "", want
}

// canon lower-cases a model name and spells gpt-3.5 as Azure does
// (gpt-35), so OpenAI's spelling in a config matches Azure's answer.
func canon(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if rest, ok := strings.CutPrefix(s, "gpt-3.5"); ok {
		s = "gpt-35" + rest
	}
	return s
}

func at(version string) string {
	if version == "" {
		return ""
	}
	return " version " + version
}
