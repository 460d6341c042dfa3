package agent

import (
	"encoding/json"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/llm"
)

// Status is how a task ended.
type Status string

// The ways a task ends.
const (
	Succeeded       Status = "succeeded"        // the goal is met (and the success check holds)
	Failed          Status = "failed"           // the task ran and did not reach its goal
	Stuck           Status = "stuck"            // the agent repeated itself after planning again
	BudgetExhausted Status = "budget_exhausted" // the next call would have reserved past token_budget
	DeadlineHit     Status = "deadline"         // the task's deadline passed
	Shed            Status = "shed"             // the budget could not place a call in time
	Errored         Status = "error"            // the browser or the model failed, or the run was interrupted
)

// SuccessBy is how a success is known.
type SuccessBy string

// The ways a success is known.
const (
	SuccessChecked SuccessBy = "success_check" // the task's success check passed on the final page
	SuccessJudged  SuccessBy = "model"         // the model judged the goal met; the task has no check
)

// Result is what a task did: how it ended, the answer, every step with
// its model calls, and the totals. It is written as result.json.
type Result struct {
	Task string `json:"task"`
	// Params are the values the task's parameters were bound with,
	// defaults included.
	Params map[string]string `json:"params,omitempty"`
	Status Status            `json:"status"`
	Reason string            `json:"reason"`
	// SuccessBy says how a success is known: the task's success check
	// passed on the final page (SuccessChecked), or the model judged the
	// goal met (SuccessJudged), which no one has verified. Empty unless
	// the task succeeded.
	SuccessBy SuccessBy `json:"success_by,omitempty"`
	// Model says what answered, when it is not a language model: the
	// embedded stand-in (llm.Caller.StandIn).
	Model  string `json:"model,omitempty"`
	Answer string `json:"answer"`
	// Data is the answer as structured data, when the task names an
	// answer_type: the type's parsed output (Answer holds its JSON).
	Data json.RawMessage `json:"data,omitempty"`
	// Plan is the last plan the model made.
	Plan  []string `json:"plan,omitempty"`
	Steps []Step   `json:"steps"`
	// Calls are the calls outside any step: planning and summarize.
	Calls  []llm.Report `json:"calls"`
	Totals Totals       `json:"totals"`
	// Refused are the requests the allowed domains turned away, from any
	// tab, frame or worker; ClosedTabs the new tabs the pages opened,
	// each closed as it appeared. What a page tried, not what it got.
	Refused    []string `json:"refused,omitempty"`
	ClosedTabs []string `json:"closed_tabs,omitempty"`
	// Downloads are the files the pages had the browser save, under the
	// output folder's downloads/ (TaskOptions.OutDir), or tried to.
	Downloads []browser.Download `json:"downloads,omitempty"`
	// AllowedDomains are the domains the run's browser was confined to;
	// AllowedExtra those of them beyond the task's own allowlist, given
	// on purpose (--allow-extra), "*" for a browser confined to none.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	AllowedExtra   []string `json:"allowed_extra,omitempty"`
	// ReplayMissed are the requests a replayed run asked for that its
	// recording does not hold: why a replay went differently.
	ReplayMissed []string `json:"replay_missed,omitempty"`
	// Learned is what the run did with learned runs, when it used a
	// store: the entry it followed, the steps replayed and asked, the
	// tokens saved, and what it stored.
	Learned *Learned `json:"learned,omitempty"`
	// StorageDropped counts the cookies and origins of a storage state
	// outside the allowed domains, not loaded.
	StorageDropped int `json:"storage_dropped,omitempty"`
}

// Step is one step of a run: a scripted action or a model's pick, what
// came of it, and the calls it made.
type Step struct {
	N int `json:"n"` // from 1
	// Action is the action as written (calltypes.Action.String for a
	// pick, the step's own wording for a scripted one).
	Action string `json:"action"`
	// Target describes the element acted on, as the snapshot named it.
	Target string `json:"target,omitempty"`
	// Outcome is what happened: navigated, changed, nothing, or the error.
	Outcome string `json:"outcome"`
	URL     string `json:"url"` // after the step
	// Why is the model's reason for the pick; empty for a scripted step.
	Why string `json:"why,omitempty"`
	// Verdict is the yes-no check after the step, when one was made.
	Verdict  string `json:"verdict,omitempty"`
	Scripted bool   `json:"scripted,omitempty"`
	// Replayed is set on a step taken from a learned run, with no call;
	// TokensSaved is what its calls reserved when it was learned.
	Replayed    bool         `json:"replayed,omitempty"`
	TokensSaved int64        `json:"tokens_saved,omitempty"`
	Screenshot  string       `json:"screenshot,omitempty"` // file name in the output directory
	Calls       []llm.Report `json:"calls"`
	ElapsedMS   int64        `json:"elapsed_ms"`
	// AgentMS is the step's time less its model calls' latency: the
	// browser and the agent's own work.
	AgentMS int64 `json:"agent_ms"`
}

// Totals add up a run.
type Totals struct {
	Steps        int   `json:"steps"`
	Calls        int   `json:"calls"`
	PromptTokens int64 `json:"prompt_tokens"`
	// CachedTokens is the part of PromptTokens the deployments read from
	// their prompt caches; Images and ImageTokens the screenshots the
	// calls carried and what they were reserved at.
	CachedTokens   int64 `json:"cached_tokens,omitempty"`
	Images         int   `json:"images,omitempty"`
	ImageTokens    int64 `json:"image_tokens,omitempty"`
	TokensReserved int64 `json:"tokens_reserved"`
	TokensUsed     int64 `json:"tokens_used"`
	// TokensSaved is what the steps replayed from a learned run reserved
	// when learned: the calls this run did not make.
	TokensSaved int64 `json:"tokens_saved,omitempty"`
	ModelMS     int64 `json:"model_ms"` // the calls' latency
	ElapsedMS   int64 `json:"elapsed_ms"`
	Retries     int   `json:"retries"`
	RateLimited int   `json:"rate_limited"`
	// StoreWritesFailed counts the budget writes after the calls that the
	// shared store did not take (see llm.Report.StoreWritesFailed).
	StoreWritesFailed int `json:"store_writes_failed,omitempty"`
	// Mended, Repaired and Invalid count the calls whose answer the parser
	// refused: read once their type mended a slip, read after a repair
	// request, and still refused after it (the call failed).
	Mended   int `json:"mended,omitempty"`
	Repaired int `json:"repaired,omitempty"`
	Invalid  int `json:"invalid,omitempty"`
	// TokenBudget is the task's, for comparison; 0 when it set none.
	TokenBudget int64 `json:"token_budget,omitempty"`
	// PeakRSSMB and ChromePeakRSSMB are the peak memory of the process
	// that ran the agent and of its Chrome, when the runner measured them.
	PeakRSSMB       float64 `json:"peak_rss_mb,omitempty"`
	ChromePeakRSSMB float64 `json:"chrome_peak_rss_mb,omitempty"`
}
