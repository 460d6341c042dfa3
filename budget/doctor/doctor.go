// Package doctor checks a config before a fleet starts, against what Azure
// counts: deployments that are one quota under several names, pools that
// could mix model versions, request limits that do not come with their
// token limits, no Global Standard where it would be the simpler answer,
// and a fallback too small for the load it is there to take. With a
// probe it also asks each deployment what it allows and which model it
// serves. Every finding names the deployments, the figures and what to do.
//
// The probe is a function value (llm.Probe in the binary), so this
// package links no Azure client.
package doctor

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
)

// Severity says how much a finding matters. Errors break calls, warnings
// cost throughput or draw 429s, infos are worth knowing.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// The checks, as findings name them.
const (
	CheckConfig         = "config"            // a warning config.Load gave
	CheckSharedQuota    = "shared-quota"      // several names, one quota
	CheckPoolVersion    = "pool-version"      // a pool whose versions are not pinned
	CheckRPMRatio       = "rpm-ratio"         // rpm that does not come with tpm
	CheckGlobalStandard = "global-standard"   // routing where Azure would route
	CheckFallback       = "fallback-capacity" // a fallback smaller than its load
	CheckServiceTier    = "service-tier"      // a tier a deployment does not offer
	CheckProbe          = "probe"             // a deployment that does not answer
	CheckProbeLimit     = "probe-limit"       // the limit Azure reports against tpm and rpm
	CheckProbeVersion   = "probe-version"     // the model Azure serves against the config's
)

// Finding is one thing the doctor found.
type Finding struct {
	Severity    Severity `json:"severity"`
	Check       string   `json:"check"`
	Deployments []string `json:"deployments"`
	Message     string   `json:"message"`
	Fix         string   `json:"fix"`
}

// Answer is what a probe saw of one deployment.
type Answer struct {
	Status int
	// Header holds the answer's x-ratelimit-* headers.
	Header http.Header
	// Model is the answer's model field (Azure's model-version name).
	Model string
	// Code and Message are Azure's error, on a status other than 2xx.
	Code, Message string
	Latency       time.Duration
}

// Probe sends one tiny call to a deployment. Its error means no answer
// at all; it must never hold a secret.
type Probe func(ctx context.Context, d budget.Deployment) (Answer, error)

// Probed is one deployment's probe, as reported.
type Probed struct {
	Deployment string `json:"deployment"`
	// Status is 0 when nothing answered.
	Status int    `json:"status"`
	Model  string `json:"model,omitempty"`
	// The rate-limit headers; -1 for one the answer did not carry.
	LimitTokens       int64  `json:"limit_tokens"`
	RemainingTokens   int64  `json:"remaining_tokens"`
	LimitRequests     int64  `json:"limit_requests"`
	RemainingRequests int64  `json:"remaining_requests"`
	LatencyMS         int64  `json:"latency_ms"`
	Error             string `json:"error,omitempty"`
}

// Report is everything one check of a config found.
type Report struct {
	Config      string    `json:"config"`
	Deployments int       `json:"deployments"`
	Findings    []Finding `json:"findings"`
	Probed      []Probed  `json:"probed"`
}

// Count is how many findings have severity s.
func (r Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Failed reports a finding that needs doing something about: a warning
// or an error. Infos alone leave a config fit to start a fleet on.
func (r Report) Failed() bool { return r.Count(Error)+r.Count(Warning) > 0 }

// Options are what Check may use beside the config.
type Options struct {
	// Warnings are config.Load's, turned into findings unless a check
	// says the same thing with more.
	Warnings []budget.Warning
	// Probe, when set, is sent to every deployment.
	Probe Probe
	// Timeout bounds each probe; 0 is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is how long a probe may take: a deployment that has not
// answered one token by then will not serve a fleet either.
const DefaultTimeout = 20 * time.Second

// Check runs every check on f, a config that config.Load (or Parse)
// accepted, and probes each deployment when o.Probe is set. Findings come
// errors first, then warnings, then infos, each in the order the checks
// run.
func Check(ctx context.Context, f *config.File, o Options) Report {
	c := &checker{f: f, cfg: &f.Budget}
	c.loadWarnings(o.Warnings)
	if len(c.cfg.Deployments) == 0 {
		c.add(Info, CheckConfig, nil,
			"the config declares no deployments: calls run on the embedded simulator, in one process",
			"declare deployments (name, endpoint, model, tpm, auth) to run a fleet on Azure")
	} else {
		c.sharedQuotas()
		c.poolVersions()
		c.rpmRatios()
		c.globalStandard()
		c.fallbacks()
		c.serviceTiers()
		if o.Probe != nil {
			c.probe(ctx, o.Probe, cmp.Or(o.Timeout, DefaultTimeout))
		}
	}
	slices.SortStableFunc(c.findings, func(a, b Finding) int { return a.Severity.rank() - b.Severity.rank() })
	r := Report{Config: f.Name(), Deployments: len(c.cfg.Deployments), Findings: c.findings, Probed: c.probed}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Probed == nil {
		r.Probed = []Probed{}
	}
	return r
}

type checker struct {
	f        *config.File
	cfg      *budget.Config
	findings []Finding
	probed   []Probed
}

func (c *checker) add(s Severity, check string, deps []string, msg, fix string) {
	if deps == nil {
		deps = []string{}
	}
	c.findings = append(c.findings, Finding{Severity: s, Check: check, Deployments: deps, Message: msg, Fix: fix})
}
