package calltypes

// The inputs and answers of the built-in types. A call's user message is
// its input as JSON; its answer is JSON that the type's schema describes
// and its parser turns into the answer type.

// Page is what a call sees of the page: the browser's snapshot, compact.
type Page struct {
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Elements []Element `json:"elements,omitempty"`
	// Text is the page's readable text, possibly cut to a size.
	Text string `json:"text,omitempty"`
}

// Element is one interactive element, by the index the browser gave it.
type Element struct {
	Index       int    `json:"index"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Tag         string `json:"tag,omitempty"`
	Type        string `json:"type,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	Href        string `json:"href,omitempty"`
	Value       string `json:"value,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
	Offscreen   bool   `json:"offscreen,omitempty"`
}

// PlanInput asks for a short plan for a goal.
type PlanInput struct {
	Goal string `json:"goal"`
	Page Page   `json:"page"`
}

// Plan is a numbered plan: a few short steps.
type Plan struct {
	Steps []string `json:"steps"`
}

// PickInput asks for the next action on the page.
type PickInput struct {
	Goal string   `json:"goal"`
	Plan []string `json:"plan,omitempty"`
	Step int      `json:"step"` // position in the plan, from 0
	Page Page     `json:"page"`
	// History is the last few actions taken, newest last.
	History []string `json:"history,omitempty"`
}

// Action kinds.
const (
	ActClick    = "click"
	ActType     = "type"
	ActSelect   = "select"
	ActScroll   = "scroll"
	ActNavigate = "navigate"
	ActDone     = "done"
)

// Action is the next thing to do: click an element, type text into it,
// select an option of it, scroll (up, down, or to it), navigate to a URL,
// or declare the goal done.
type Action struct {
	Action string `json:"action"`
	// Index is the element acted on (click, type, select, scroll to);
	// -1 when the action has none.
	Index int `json:"index"`
	// Text is what to type, the option to select, the URL to navigate to,
	// or the scroll direction (up, down).
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// CheckInput asks a yes/no question about the page: did the last action
// achieve what it meant to, or is the goal met.
type CheckInput struct {
	Question   string `json:"question"`
	Goal       string `json:"goal"`
	LastAction string `json:"last_action,omitempty"`
	Page       Page   `json:"page"`
}

// Verdict is a yes or no with a short reason.
type Verdict struct {
	Answer bool   `json:"answer"`
	Reason string `json:"reason"`
}

// SummaryInput asks for the final answer or extraction.
type SummaryInput struct {
	Goal string `json:"goal"`
	Page Page   `json:"page"`
	// Notes are what earlier steps found, oldest first.
	Notes []string `json:"notes,omitempty"`
}

// Summary is the final answer.
type Summary struct {
	Answer string `json:"answer"`
}
