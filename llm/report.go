package llm

import "time"

// Report is what one call did: its type and cap, where it went, what it
// was charged and used, how long it took and what it met on the way. The
// caller returns it, a cassette keeps one beside each exchange, and
// `headroom call` and an agent's result print it.
type Report struct {
	Type       string `json:"type"`
	Deployment string `json:"deployment"` // the one that answered last
	// MaxTokens is the cap sent: the type's, plus the reasoning allowance
	// on a reasoning model; twice that after a truncation retry.
	MaxTokens int64 `json:"max_tokens"`
	N         int64 `json:"n"`
	// PromptTokens is the prompt as the deployment counted it, on the
	// call's first request.
	PromptTokens int64 `json:"prompt_tokens"`
	// CachedTokens is the part of PromptTokens the deployment read from
	// its prompt cache (usage.prompt_tokens_details.cached_tokens), on
	// the call's first request.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// HistoryTokens is the stored conversation a Responses call continued
	// (previous_response_id), as the last response's usage counted it:
	// Azure charges it as input, so it is reserved beside the request.
	HistoryTokens int64 `json:"history_tokens,omitempty"`
	// Images are the images the call's requests carried, and ImageTokens
	// what they were priced at in TokensReserved, by the rule of the
	// deployment model's family.
	Images         int   `json:"images,omitempty"`
	ImageTokens    int64 `json:"image_tokens,omitempty"`
	TokensReserved int64 `json:"tokens_reserved"` // charged to the budget, over every request
	TokensUsed     int64 `json:"tokens_used"`     // what the answers used
	LatencyMS      int64 `json:"latency_ms"`
	// AdmittedAt is when the budget admitted the call's last request, by
	// the store's clock, and SentAt when that request finished going out:
	// between them, the time a fleet's pacing allows for (see
	// learning.Calibration.Lag). SendBy is the latest that request could
	// leave, by the fleet's pacing (budget.Lease.SendBy); a SentAt after
	// it is a process stopped in the last instant before its request left.
	// Zero without a request, and SendBy without a bound.
	AdmittedAt time.Time `json:"admitted_at,omitzero"`
	SentAt     time.Time `json:"sent_at,omitzero"`
	SendBy     time.Time `json:"send_by,omitzero"`
	// Retries counts the requests beyond the first: the router's retries
	// on 429s, 5xx and timeouts, a fallback, a truncation retry, a repair
	// request. A budget store asked again (budget.Router's) sends nothing
	// and is not one.
	Retries int `json:"retries"`
	// RateLimited counts the 429s met on the way.
	RateLimited int `json:"rate_limited"`
	// StoreWritesFailed counts the budget store's writes after the call's
	// requests (a settle, a cancel, a breaker opened on a 429) that the
	// store did not take: room held to its window's end, or a breaker the
	// fleet did not hear of. The answer stands.
	StoreWritesFailed int `json:"store_writes_failed,omitempty"`
	// ReasoningEffort and ReasoningTokens are a reasoning model's: the
	// effort sent, and the tokens its answers spent reasoning (inside
	// TokensUsed).
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	ReasoningTokens int64  `json:"reasoning_tokens,omitempty"`
	// ServiceTier is the tier that served the call's last request, as
	// the deployment said ("default", "flex", "priority"); TierFallback
	// is the tier asked for first when its deployment refused it and the
	// call was sent again on the default tier (one of the Retries).
	ServiceTier  string `json:"service_tier,omitempty"`
	TierFallback string `json:"tier_fallback,omitempty"`
	// Fallback is set when the fallback pool served the call.
	Fallback bool `json:"fallback,omitempty"`
	// Repaired is set when the answer was read after a repair request
	// (one of the Retries). Mends are the slips the type mended in the
	// answer it read ("submit dropped from click"); with no repair
	// request, they are why none was sent. Invalid is set when the answer
	// was still refused after the repair request: the call failed with an
	// *InvalidOutputError.
	Repaired bool     `json:"repaired,omitempty"`
	Mends    []string `json:"mends,omitempty"`
	Invalid  bool     `json:"invalid,omitempty"`
}

// add folds another request of the same call into r.
func (r *Report) add(x Report) {
	if r.PromptTokens == 0 {
		r.PromptTokens, r.CachedTokens = x.PromptTokens, x.CachedTokens
	}
	if x.ServiceTier != "" {
		r.ServiceTier = x.ServiceTier
	}
	if x.Deployment != "" {
		r.Deployment = x.Deployment
	}
	r.TokensReserved += x.TokensReserved
	r.Images += x.Images
	r.ImageTokens += x.ImageTokens
	r.TokensUsed += x.TokensUsed
	r.LatencyMS += x.LatencyMS
	if !x.AdmittedAt.IsZero() {
		r.AdmittedAt, r.SentAt, r.SendBy = x.AdmittedAt, x.SentAt, x.SendBy
	}
	r.Retries += x.Retries
	r.RateLimited += x.RateLimited
	r.StoreWritesFailed += x.StoreWritesFailed
}
