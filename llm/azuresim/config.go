package azuresim

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config describes the simulated Azure OpenAI resources, their deployments and
// the quota pools those deployments draw on. The zero value of every field
// but Resources works.
type Config struct {
	// Window is the length of the token-rate window; Azure's is one minute.
	// The 1 s and 10 s request windows scale with it, so a 6 s Window makes
	// them 100 ms and 1 s.
	Window time.Duration `yaml:"window"`
	// Refund says what happens to the unused part of a call's estimate
	// when it completes.
	Refund RefundPolicy `yaml:"refund"`
	// Faults apply to every deployment that does not set its own.
	Faults Faults `yaml:"faults"`
	// Seed fixes the random faults and latencies; 0 picks one.
	Seed int64 `yaml:"seed"`
	// Pools declare shared quotas by name. Deployments that name a pool, or
	// share subscription, region, type and model, draw on one budget.
	Pools []Pool `yaml:"pools"`
	// Resources are the simulated Azure OpenAI resources (endpoints).
	Resources []Resource `yaml:"resources"`
	// Deployments is shorthand for the deployments of one resource named
	// "default" served at the root of the main address.
	Deployments []Deployment `yaml:"deployments"`
}

// RefundPolicy is what the simulator does with the unused estimate.
type RefundPolicy string

const (
	// Hold keeps the whole estimate charged for the rest of the window;
	// nothing in Azure's documentation says unused estimate comes back.
	Hold RefundPolicy = "hold"
	// Refund gives the unused estimate back when the call completes (the
	// budget client's policy of the same name assumes the same).
	Refund RefundPolicy = "refund"
)

// released is Refund's earlier name, still accepted in a config or on
// headroom sim's --refund.
const released RefundPolicy = "release"

// normal is p under its current name.
func (p RefundPolicy) normal() RefundPolicy {
	if p == released {
		return Refund
	}
	return p
}

// Pool is a quota shared by several deployments.
type Pool struct {
	Name string `yaml:"name"`
	TPM  int64  `yaml:"tpm"`
	RPM  int64  `yaml:"rpm"`
}

// Resource is one simulated Azure OpenAI resource: its own endpoint, its own
// key space for stored Responses items.
type Resource struct {
	Name string `yaml:"name"`
	// Addr is where it listens; empty means the simulator's main address.
	Addr string `yaml:"addr"`
	// PathPrefix lets several resources share one address, as
	// /res-a/openai/... and /res-b/openai/...
	PathPrefix  string       `yaml:"path_prefix"`
	Region      string       `yaml:"region"`
	Deployments []Deployment `yaml:"deployments"`
}

// Deployment is one model deployment with its own rate limits.
type Deployment struct {
	Name         string `yaml:"name"`
	Model        string `yaml:"model"`
	ModelVersion string `yaml:"model_version"`
	TPM          int64  `yaml:"tpm"`
	// RPM defaults from quota units: see DefaultRPM.
	RPM          int64  `yaml:"rpm"`
	Subscription string `yaml:"subscription"`
	Region       string `yaml:"region"`
	// Type is the deployment type (standard, global-standard, data-zone,
	// provisioned); it is part of the quota pool's identity.
	Type string `yaml:"type"`
	// Pool names a declared pool explicitly.
	Pool string `yaml:"pool"`
	// Reply names the model behaviour: "echo" (default), "fixed", or one
	// registered with Options.Models (headroom sim registers "heuristic",
	// the offline, rule-based stand-in of package heuristic).
	Reply string `yaml:"reply"`
	// OutputTokens is the answer length of the "fixed" behaviour.
	OutputTokens int `yaml:"output_tokens"`
	// DefaultMaxTokens is charged when a request sets no max_tokens.
	DefaultMaxTokens int64 `yaml:"default_max_tokens"`
	// ReasoningTokens is what a call on a reasoning model (o1, o3,
	// o4-mini, gpt-5, ...) spends thinking at each reasoning_effort
	// (minimal, low, medium, high), drawn from its cap before the answer;
	// DefaultReasoning fills in the efforts it leaves out.
	ReasoningTokens map[string]int64 `yaml:"reasoning_tokens"`
	// Faults override the simulator-wide faults for this deployment.
	Faults *Faults `yaml:"faults"`
	// Adjustments lower the effective limit on a schedule, counted from
	// the moment the simulator starts.
	Adjustments []Adjustment `yaml:"adjustments"`
	// ServiceTiers, when set, are the service tiers beyond default the
	// deployment takes (flex, priority; [default] for neither), in place
	// of what the simulator's table says of its model.
	ServiceTiers []string `yaml:"service_tiers"`
	// CacheIdle is how long a cached prompt prefix lasts unused (0 is
	// DefaultCacheIdle); CacheOff keeps no prompt cache at all.
	CacheIdle time.Duration `yaml:"cache_idle"`
	CacheOff  bool          `yaml:"cache_off"`

	// The rules below are ones a client cannot see from outside; their
	// zero values are the simulator's usual behaviour.

	// RequestWindows and TokenWindow say how the 1 s and 10 s request
	// windows and the token window count: FixedWindow (the default) or
	// SlidingWindow. Deployments that share a quota pool must agree.
	RequestWindows WindowRule `yaml:"request_windows"`
	TokenWindow    WindowRule `yaml:"token_window"`
	// EstimateScale multiplies what a call is charged at admission (0 or
	// 1: the character rule's estimate as it is); EstimateNoise spreads
	// each call's charge by a factor drawn uniformly within ± that
	// fraction, from the simulator's seed.
	EstimateScale float64 `yaml:"estimate_scale"`
	EstimateNoise float64 `yaml:"estimate_noise"`
	// ImageAdmission is what admission charges for each image a call
	// carries; 0 charges the image's published token count. How Azure's
	// admission counts an image is not published, so a flat figure lets a
	// client's guess be tried against a server that differs from it.
	ImageAdmission int64 `yaml:"image_admission"`
	// DispatchDelay is how long after a call arrives the server counts
	// it (and may refuse it), spread by ± DispatchJitter of itself: the
	// lag between a client's admission and the server's.
	DispatchDelay  time.Duration `yaml:"dispatch_delay"`
	DispatchJitter float64       `yaml:"dispatch_jitter"`
	// DispatchTail, instead of the jitter, draws the delay from a long
	// tail, as a starved host's lag is: DispatchDelay × e^(DispatchTail ×
	// z) for a normal z (a lognormal whose median is DispatchDelay), at
	// most DispatchMax (default 20 × DispatchDelay). With 20ms and 1, the
	// 90th percentile is 72ms and the 99th 205ms.
	DispatchTail float64       `yaml:"dispatch_tail"`
	DispatchMax  time.Duration `yaml:"dispatch_max"`
}

// WindowRule is how a rate window counts.
type WindowRule string

const (
	// FixedWindow counts from boundaries on multiples of the window's
	// length, and forgets everything at each one.
	FixedWindow WindowRule = "fixed"
	// SlidingWindow counts what was admitted in the last window length,
	// from any instant.
	SlidingWindow WindowRule = "sliding"
)

func (w WindowRule) sliding() bool { return w == SlidingWindow }

// maxEstimateScale bounds estimate_scale, far above any plausible
// disagreement, so a charge stays a sane whole number.
const maxEstimateScale = 100

// Faults make a deployment misbehave the way real endpoints do.
type Faults struct {
	// Latency is the base time to answer; LatencyPerToken adds to it for
	// every generated token; Jitter spreads both by ± that fraction.
	Latency         time.Duration `yaml:"latency"`
	LatencyPerToken time.Duration `yaml:"latency_per_token"`
	Jitter          float64       `yaml:"jitter"`
	// ErrorRate is the fraction of calls answered 500 before admission
	// (nothing is charged).
	ErrorRate float64 `yaml:"error_rate"`
	// DropRate is the fraction of admitted calls whose connection is
	// closed without an answer (the estimate stays charged).
	DropRate float64 `yaml:"drop_rate"`
}

// Adjustment lowers a deployment's effective token limit to Factor × TPM
// from At after start, for For.
type Adjustment struct {
	At     time.Duration `yaml:"at"`
	For    time.Duration `yaml:"for"`
	Factor float64       `yaml:"factor"`
}

// DefaultWindow is Azure's token-rate window.
const DefaultWindow = time.Minute

// defaultMaxTokens is charged when a request names no cap. Azure reserves a
// model-dependent default that is large on newer models; the pessimistic
// reading keeps clients honest about setting one.
const defaultMaxTokens = 4096

// ParseDeploymentFlag parses the NAME:TPM[:RPM] form of --deployment.
func ParseDeploymentFlag(s string) (Deployment, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Deployment{}, fmt.Errorf("deployment %q: want NAME:TPM[:RPM], for example gpt4o:60000 or gpt4o:60000:360", s)
	}
	d := Deployment{Name: strings.TrimSpace(parts[0])}
	if d.Name == "" {
		return Deployment{}, fmt.Errorf("deployment %q: the name is empty", s)
	}
	var err error
	if d.TPM, err = parsePositive(parts[1]); err != nil {
		return Deployment{}, fmt.Errorf("deployment %q: TPM %w", s, err)
	}
	if len(parts) == 3 {
		if d.RPM, err = parsePositive(parts[2]); err != nil {
			return Deployment{}, fmt.Errorf("deployment %q: RPM %w", s, err)
		}
	}
	return d, nil
}

func parsePositive(s string) (int64, error) {
	var n int64
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("is empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
		if n > (1<<53)/10 {
			return 0, fmt.Errorf("%q is too large", s)
		}
		n = n*10 + int64(c-'0')
	}
	if n == 0 {
		return 0, errors.New("must be above zero")
	}
	return n, nil
}
