package agent

import (
	"regexp"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// Task is one job for one agent, as a task file writes it (YAML):
//
//	name: cheapest-desk
//	start_url: http://127.0.0.1:8391/shop/
//	goal: Find the cheapest {{item}} and report its price.
//	params: {item: desk}    # {{item}} in the goal, the steps and success
//	allowed_domains: [127.0.0.1]
//	max_steps: 12
//	token_budget: 60000
//	deadline: 2m
//	priority: interactive
//	success: {text: "EUR", url: "/shop/item"}
//	replay: shop.har        # relative to the task file; none: the live web
//	cassette: shop.jsonl    # model calls to answer from
//	storage_state: s.json   # cookies and localStorage to start with
//	secrets:                # typed by name: <secret:password>
//	  password: {env: SHOP_PASSWORD, domains: [127.0.0.1]}
//	learn: off              # neither learn this task's runs nor replay them
//	steps:                  # scripted before, between or instead of the model
//	  - type: "#q"
//	    text: "{{item}}"
//	    submit: true
//	  - agent: open the cheapest desk
type Task struct {
	Name     string `yaml:"name" json:"name"`
	StartURL string `yaml:"start_url" json:"start_url"`
	Goal     string `yaml:"goal" json:"goal"`
	// Params declares the task's parameters, each with its default: the
	// goal, the steps and the success check write {{name}} where the
	// value goes. A nil default (null in YAML) is a value the run must be
	// given. Bind puts the values in.
	Params map[string]*string `yaml:"params" json:"params,omitempty"`
	// AllowedDomains confine the browser; empty allows the start URL's
	// host alone.
	AllowedDomains []string `yaml:"allowed_domains" json:"allowed_domains,omitempty"`
	// MaxSteps bounds the actions the model takes; DefaultMaxSteps when 0.
	MaxSteps int `yaml:"max_steps" json:"max_steps"`
	// TokenBudget is the tokens the whole task may reserve; 0 is no bound.
	TokenBudget int64 `yaml:"token_budget" json:"token_budget,omitempty"`
	// Deadline bounds the task's time; 0 is no bound.
	Deadline Duration `yaml:"deadline" json:"deadline,omitempty"`
	// Priority is the class of every call; "" is interactive.
	Priority calltypes.Priority `yaml:"priority" json:"priority,omitempty"`
	Success  *Success           `yaml:"success" json:"success,omitempty"`
	// AnswerType names the call type that answers the goal at the end,
	// instead of summarize: one defined in the config, whose schema makes
	// the answer structured data (Result.Data). It gets summarize's input:
	// the goal, the final page and the notes.
	AnswerType string `yaml:"answer_type" json:"answer_type,omitempty"`
	// Replay is a HAR file to answer every request from, offline.
	Replay string `yaml:"replay" json:"replay,omitempty"`
	// Cassette is a file of model calls to answer from, with no model.
	Cassette string `yaml:"cassette" json:"cassette,omitempty"`
	// Secrets are values the task types by name: the goal and the steps
	// write <secret:NAME>, the model sees only that, and the browser types
	// the value on the secret's domains alone.
	Secrets map[string]SecretSource `yaml:"secrets" json:"secrets,omitempty"`
	// Files are the files the task may upload, by name: a scripted step
	// writes upload: SELECTOR with file: NAME, the model upload [i]
	// <file:NAME>, and nothing else on disk can be reached. Paths are resolved against the task file's
	// directory.
	Files map[string]string `yaml:"files" json:"files,omitempty"`
	// StorageState is a file of cookies and localStorage in Playwright's
	// storageState format, loaded before the start page: a session carried
	// from an earlier run. Resolved against the task file's directory.
	StorageState string `yaml:"storage_state" json:"storage_state,omitempty"`
	// Steps are scripted actions and sub-goals, in order. None means one
	// model-driven sub-goal: the Goal.
	Steps []TaskStep `yaml:"steps" json:"steps,omitempty"`
	// Dialogs is how the pages' alerts, confirms, prompts and
	// beforeunload questions are answered: "accept" (the default) or
	// "dismiss". Each is answered as it opens, and what it said is noted
	// in the step that opened it, or in the next view of the page.
	Dialogs browser.DialogPolicy `yaml:"dialogs" json:"dialogs,omitempty"`
	// Learn is "off" to keep this task's runs from being learned or
	// replayed; "" follows the run's store.
	Learn string `yaml:"learn" json:"learn,omitempty"`

	// File is the task file's path, for messages; Replay and Cassette are
	// resolved against its directory when loaded.
	File string `yaml:"-" json:"-"`

	// tmpl is the task as written, when this one is bound (Bind) or comes
	// from a task list entry; nil when this one is as written.
	tmpl *Task
	// bound are the values bound, nil while the task is not.
	bound map[string]string
	// fixed are the values a task list entry gives, which win over those
	// given to Bind.
	fixed map[string]string
}

// LearnOff is the Learn that keeps a task's runs from being learned or
// replayed.
const LearnOff = "off"

// DefaultMaxSteps bounds a task that sets no max_steps.
const DefaultMaxSteps = 20

// Success is what the final page must show for the task to succeed: the
// text, the URL pattern (a regular expression), or both.
type Success struct {
	Text string `yaml:"text" json:"text,omitempty"`
	URL  string `yaml:"url" json:"url,omitempty"`
	// Download is a file name pattern (path.Match: *.csv, report-*.pdf)
	// that a file the run downloaded and saved must match.
	Download string `yaml:"download" json:"download,omitempty"`

	url *regexp.Regexp // URL compiled, when the task is loaded or run
}

// TaskStep is one scripted step (the syntax of a steps file) or, with
// Agent set, a sub-goal handed to the model until it is met.
type TaskStep struct {
	browser.Step `yaml:",inline"`
	Agent        string `yaml:"agent,omitempty" json:"agent,omitempty"`
}

// Duration is a time.Duration written as "90s" or "2m".
type Duration time.Duration
