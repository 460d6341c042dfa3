package calltypes

// The inputs and answers of the built-in types. A call's user message is
// its input as JSON; its answer is JSON that the type's schema describes
// and its parser turns into the answer type.

// Page is what a call sees of the page: the browser's snapshot, compact and
// within a token cap.
type Page struct {
	URL      string    `json:"url"`
	Title    string    `json:"title"`
	Elements []Element `json:"elements,omitempty"`
	// Text is the page's readable text, cut to fit the cap.
	Text string `json:"text,omitempty"`
	// Cut says what was left out to fit the cap; empty when nothing was.
	Cut string `json:"cut,omitempty"`
}

// Element is one interactive element, by the index the browser gave it.
type Element struct {
	Index       int      `json:"index"`
	Role        string   `json:"role,omitempty"`
	Name        string   `json:"name,omitempty"`
	Tag         string   `json:"tag,omitempty"`
	Type        string   `json:"type,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Href        string   `json:"href,omitempty"`
	Value       string   `json:"value,omitempty"`
	Options     []string `json:"options,omitempty"` // a drop-down's choices, for select
	Checked     bool     `json:"checked,omitempty"`
	Disabled    bool     `json:"disabled,omitempty"`
	Hidden      bool     `json:"hidden,omitempty"`    // no box a person can see
	Offscreen   bool     `json:"offscreen,omitempty"` // scroll to reach it
}

// PlanInput asks for a short plan for a goal.
type PlanInput struct {
	Goal string `json:"goal"`
	Page Page   `json:"page"`
	// History is what was tried so far, when the agent plans again.
	History []Taken `json:"history,omitempty"`
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
	// Notes fold the older steps into a few short lines, oldest first.
	Notes []string `json:"notes,omitempty"`
	// History is the last few steps taken, newest last.
	History []Taken `json:"history,omitempty"`
}

// CheckInput asks a yes/no question about the page: did the last action
// achieve what it meant to, or is the goal met.
type CheckInput struct {
	Question   string `json:"question"`
	Goal       string `json:"goal"`
	LastAction *Taken `json:"last_action,omitempty"`
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
