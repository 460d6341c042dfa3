package azuresim

import (
	"slices"
	"time"
)

// Stats are one deployment's counts since the simulator started.
type Stats struct {
	Resource     string `json:"resource"`
	Deployment   string `json:"deployment"`
	Pool         string `json:"pool,omitempty"`
	TPM          int64  `json:"tpm"`
	RPM          int64  `json:"rpm"`
	EffectiveTPM int64  `json:"effective_tpm"`

	Accepted     int64   `json:"accepted"`
	RateLimited  ByCause `json:"rate_limited"`
	ServerErrors int64   `json:"server_errors"`
	Dropped      int64   `json:"dropped"`

	// TokensCharged is the sum of admission estimates; TokensRefunded what
	// the refund policy gave back; PromptTokens and CompletionTokens are
	// what the calls really used.
	TokensCharged int64 `json:"tokens_charged"`
	// TokensEstimated is what the character rule estimated for the same
	// calls: TokensCharged differs from it only under estimate_scale or
	// estimate_noise, by what a client following the rule cannot see.
	TokensEstimated int64 `json:"tokens_estimated"`
	// WindowTokens is what the current token window holds.
	WindowTokens     int64 `json:"window_tokens"`
	TokensRefunded   int64 `json:"tokens_refunded"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// Images is how many images the accepted calls carried; ImageTokens
	// is their published token count (a part of PromptTokens), and
	// ImageTokensCharged what admission charged for them (a part of
	// TokensEstimated: the published count, or image_admission apiece).
	Images             int64 `json:"images"`
	ImageTokens        int64 `json:"image_tokens"`
	ImageTokensCharged int64 `json:"image_tokens_charged"`
	// CachedTokens is the part of PromptTokens the prompt cache held.
	CachedTokens int64 `json:"cached_tokens"`
	// Tiers counts the accepted calls by the service tier that served them.
	Tiers ByTier `json:"tiers"`
	// FirstAccepted and LastAccepted are when the first and the last call
	// accepted were counted: the span the deployment took to admit them.
	FirstAccepted time.Time `json:"first_accepted,omitzero"`
	LastAccepted  time.Time `json:"last_accepted,omitzero"`
	// CountLagMax is the longest a call waited to be counted past its
	// dispatch delay: the simulator's own lateness. A simulator starved of
	// CPU counts calls late, and so bunched, which no client caused.
	CountLagMax time.Duration `json:"count_lag_max_ns,omitempty"`
	// Refusals are the deployment's first MaxRefusals request-window
	// 429s, each with the admissions its window held: the admission log
	// that tells a client that admitted too many from calls that reached
	// the server bunched.
	Refusals []Refusal `json:"refusals,omitempty"`
}

// MaxRefusals bounds a deployment's refusal log.
const MaxRefusals = 32

// Refusal is one request-window 429 as the server counted it.
type Refusal struct {
	At     time.Time     `json:"at"`
	Window time.Duration `json:"window"` // the request window's length (1 s or 10 s, scaled)
	Limit  int64         `json:"limit"`
	// Held is when the calls the window counted were counted, oldest
	// first (a sliding window's; a fixed one keeps no times).
	Held []time.Time `json:"held,omitempty"`
	// CountLagMax is the longest the simulator took, past the dispatch
	// delay it drew, to count the refused call or any call counted in the
	// window's length before it. A simulator starved of CPU counts calls
	// late and bunched: a refusal with a lag beyond the client's pacing
	// allowance is the simulator's, not the client's.
	CountLagMax time.Duration `json:"count_lag_max_ns,omitempty"`
}

// ByCause counts 429s by the rule that refused.
type ByCause struct {
	Tokens     int64 `json:"tokens"`
	Requests   int64 `json:"requests"`
	Adjustment int64 `json:"adjustment"`
}

// Total is the number of 429s.
func (b ByCause) Total() int64 { return b.Tokens + b.Requests + b.Adjustment }

// ByTier counts calls by service tier; auto is served as default.
type ByTier struct {
	Default  int64 `json:"default"`
	Flex     int64 `json:"flex"`
	Priority int64 `json:"priority"`
}

// Snapshot is what GET /sim/stats returns.
type Snapshot struct {
	WindowMS    int64        `json:"window_ms"`
	Refund      RefundPolicy `json:"refund"`
	Deployments []Stats      `json:"deployments"`
}

// Stats returns every deployment's counts, in configuration order.
func (s *Sim) Stats() Snapshot {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{WindowMS: s.window.Milliseconds(), Refund: s.refund, Deployments: []Stats{}}
	for _, r := range s.resources {
		for _, name := range r.names {
			d := r.deployments[name]
			st := d.stats
			st.Refusals = slices.Clone(st.Refusals)
			st.Resource, st.Deployment, st.Pool = r.name, name, d.pooled
			st.TPM, st.RPM, st.EffectiveTPM = d.cfg.TPM, d.cfg.RPM, d.own.tokenLimit(now)
			d.own.tokens.at(now)
			st.WindowTokens = d.own.tokens.used
			snap.Deployments = append(snap.Deployments, st)
		}
	}
	return snap
}
