package calltypes

import "strings"

// The inputs and answers of the built-in types. A call's input is JSON,
// and its user message that JSON written as sections (Message), the page
// last; its answer is JSON that the type's schema describes and its
// parser turns into the answer type.

// PlanInput asks for a short plan for a goal.
type PlanInput struct {
	Goal string `json:"goal"`
	// History is what was tried so far, when the agent plans again.
	History []Taken `json:"history,omitempty"`
	Page    Page    `json:"page"`
}

// Plan is a numbered plan: a few short steps.
type Plan struct {
	Steps []string `json:"steps"`
}

// PickInput asks for the next action on the page.
//
// Its fields are in the order a task changes them, the steadiest first:
// the goal, the plan (until the agent plans again) and the files stay
// for the whole task, so with the system prompt they are the prefix a
// deployment's prompt cache can hold from one step to the next.
type PickInput struct {
	Goal string   `json:"goal"`
	Plan []string `json:"plan,omitempty"`
	// Files tells of the files the task declares for upload, and how
	// to give one (FilesNote); empty when it declares none.
	Files string `json:"files,omitempty"`
	Step  int    `json:"step"` // position in the plan, from 0
	// Notes fold the older steps into a few short lines, oldest first.
	Notes []string `json:"notes,omitempty"`
	// History is the last few steps taken, newest last.
	History []Taken `json:"history,omitempty"`
	Page    Page    `json:"page"`
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
	// Notes are what earlier steps found, oldest first.
	Notes []string `json:"notes,omitempty"`
	// History is the last few steps taken, newest last: what the answer
	// to a goal that does something reports on.
	History []Taken `json:"history,omitempty"`
	Page    Page    `json:"page"`
}

// Summary is the final answer.
type Summary struct {
	Answer string `json:"answer"`
}

// FilesNote is PickInput.Files for files named names: how a pick gives
// one to a file field, and their names as it writes them.
func FilesNote(names []string) string {
	if len(names) == 0 {
		return ""
	}
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = fileText(n)
	}
	return "upload [index] <file:NAME> gives a file field one of " + strings.Join(shown, ", ")
}
