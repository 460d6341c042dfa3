package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

const (
	// maxTaskFile bounds what LoadTask reads: a task is a page of YAML,
	// and anything larger is a mistake (or /dev/zero).
	maxTaskFile = 1 << 20
	// maxTaskSteps bounds max_steps.
	maxTaskSteps = 1000
)

// LoadTask reads and checks a task file. Every problem is reported as
// file:line: field: what is wrong.
func LoadTask(path string) (*Task, error) {
	data, err := yamlconf.ReadFile(path, maxTaskFile)
	if err != nil {
		return nil, err
	}
	return ParseTask(path, data)
}

// ParseTask decodes and checks a task held in memory. file names it in
// messages and is where relative replay and cassette paths start from.
func ParseTask(file string, data []byte) (*Task, error) {
	var t Task
	doc, err := yamlconf.Decode(file, data, &t)
	if err != nil {
		return nil, nameField(err)
	}
	if err := t.check(doc); err != nil {
		return nil, err
	}
	t.File = file
	dir := filepath.Dir(file)
	t.Replay = resolve(dir, t.Replay)
	t.Cassette = resolve(dir, t.Cassette)
	t.StorageState = resolve(dir, t.StorageState)
	for name, path := range t.Files {
		t.Files[name] = resolve(dir, path)
	}
	return &t, nil
}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// check validates a decoded task; doc is where it is written, to point at
// the line and to tell an empty agent from none.
func (t *Task) check(doc *yamlconf.Doc) error {
	switch {
	case strings.TrimSpace(t.Name) == "":
		return doc.Errorf("name", "a task needs a name, a short label for reports")
	case strings.IndexFunc(t.Name, unicode.IsControl) >= 0:
		return doc.Errorf("name", "a name is one line of text, with no control characters")
	}
	if err := checkStartURL(t.StartURL); err != nil {
		return doc.Errorf("start_url", "%v", err)
	}
	if strings.TrimSpace(t.Goal) == "" {
		return doc.Errorf("goal", "a task needs a goal: what the agent is to do, in a sentence")
	}
	for i, d := range t.AllowedDomains {
		if err := browser.CheckDomain(d); err != nil {
			return doc.Errorf(fmt.Sprintf("allowed_domains[%d]", i), "%v", err)
		}
	}
	if len(t.AllowedDomains) == 0 {
		// The start URL's host is then the one allowed domain (Allowed).
		for _, d := range t.Allowed() {
			if err := browser.CheckDomain(d); err != nil {
				return doc.Errorf("start_url", "its host is the task's allowed domain, as the task names no allowed_domains, and %v: name the hosts the task may reach under allowed_domains", err)
			}
		}
	}
	if t.AnswerType != "" && !calltypes.ValidName(t.AnswerType) {
		return doc.Errorf("answer_type", "%q is not a call type name: 1 to 64 letters, digits, '_' or '-'", t.AnswerType)
	}
	switch {
	case t.MaxSteps < 0:
		return doc.Errorf("max_steps", "%d is negative: leave it out or write 0 for the default (%d)", t.MaxSteps, DefaultMaxSteps)
	case t.MaxSteps > maxTaskSteps:
		return doc.Errorf("max_steps", "%d is over the limit of %d", t.MaxSteps, maxTaskSteps)
	case t.TokenBudget < 0:
		return doc.Errorf("token_budget", "%d is a negative budget: leave it out or write 0 for no bound", t.TokenBudget)
	case t.Deadline < 0:
		return doc.Errorf("deadline", "%s is negative: leave it out or write 0 for no bound", t.Deadline)
	}
	switch t.Priority {
	case "", calltypes.Interactive, calltypes.Background:
	default:
		return doc.Errorf("priority", "%q is not a priority: use %q or %q", t.Priority, calltypes.Interactive, calltypes.Background)
	}
	if err := browser.CheckDialogPolicy(t.Dialogs); err != nil {
		return doc.Errorf("dialogs", "%v", err)
	}
	if err := t.checkParams(doc); err != nil {
		return err
	}
	if s := t.Success; s != nil {
		if s.Text == "" && s.URL == "" && s.Download == "" {
			return doc.Errorf("success", "success needs text, url, download or more of them")
		}
		if _, err := path.Match(s.Download, ""); err != nil || strings.Contains(s.Download, "/") {
			return doc.Errorf("success.download", "%s is not a file name pattern: write a name or a pattern such as *.csv, with no folder", yamlconf.Quote(s.Download))
		}
		if err := s.compileTemplate(); err != nil {
			return doc.Errorf("success.url", "not a regular expression: %v", err)
		}
	}
	if err := t.checkSecrets(doc); err != nil {
		return err
	}
	if err := t.checkFiles(doc); err != nil {
		return err
	}
	return checkTaskSteps(doc, t.Steps)
}

// checkStartURL refuses anything but an absolute http(s) URL with a host
// written as the browser reads it (browser.CheckHost). The URL is not
// quoted back, only its host: the rest may carry a token.
func checkStartURL(s string) error {
	if s == "" {
		return errors.New("a task needs a start_url: the http or https page the agent opens first")
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL: want an absolute http or https URL such as https://example.com/")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return errors.New("not absolute: want an absolute http or https URL such as https://example.com/")
		}
		return fmt.Errorf("scheme %q: want http or https", u.Scheme)
	case u.Hostname() == "":
		return errors.New("no host: want an absolute http or https URL such as https://example.com/")
	case u.User != nil:
		return errors.New("a user name or password in the URL: credentials do not belong in a task file")
	}
	if err := browser.CheckHost(u.Hostname()); err != nil {
		return fmt.Errorf("its host %w", err)
	}
	return nil
}

// checkTaskSteps checks agent steps here and scripted steps with
// browser.ParseSteps, so a scripted step in a task obeys exactly the rules
// of a steps file. The first problem in the file is the one reported.
func checkTaskSteps(doc *yamlconf.Doc, steps []TaskStep) error {
	var (
		scripted []browser.Step
		at       []int // scripted[j] is steps[at[j]]
	)
	agentErr := func(field, format string, args ...any) error {
		if err := checkScripted(doc, steps, scripted, at); err != nil {
			return err
		}
		return doc.Errorf(field, format, args...)
	}
	for i, s := range steps {
		field := fmt.Sprintf("steps[%d]", i)
		switch {
		case s.Agent != "" && strings.TrimSpace(s.Agent) == "":
			return agentErr(field+".agent", "a sub-goal cannot be empty")
		case s.Agent != "":
			if set := setFields(s.Step); len(set) > 0 {
				return agentErr(field, "an agent step holds agent alone: put %s in a step of its own", strings.Join(set, " and "))
			}
		case s.Step == (browser.Step{}):
			// Always wrong, so the first one ends the search (and the file
			// is searched for agent once).
			if doc.Has(field + ".agent") {
				return agentErr(field+".agent", "a sub-goal cannot be empty")
			}
			return checkScripted(doc, steps, append(scripted, s.Step), append(at, i))
		default:
			scripted = append(scripted, stand(s.Step))
			at = append(at, i)
		}
	}
	return checkScripted(doc, steps, scripted, at)
}

// checkScripted runs the steps-file rules on scripted, which are
// steps[at[0]], steps[at[1]] and so on, and names the task's step in an
// error.
func checkScripted(doc *yamlconf.Doc, steps []TaskStep, scripted []browser.Step, at []int) error {
	if len(scripted) == 0 {
		return nil
	}
	// JSON is YAML, and exact for every value the step rules read.
	js, err := json.Marshal(scripted)
	if err != nil {
		return doc.Errorf("steps", "%v", err)
	}
	_, err = browser.ParseSteps("", js)
	if err == nil {
		return nil
	}
	var e *yamlconf.Error
	if errors.As(err, &e) && strings.HasPrefix(e.Field, "[") {
		if end := strings.IndexByte(e.Field, ']'); end > 0 {
			if j, err := strconv.Atoi(e.Field[1:end]); err == nil && j >= 0 && j < len(at) {
				msg := e.Msg
				if steps[at[j]].Step == (browser.Step{}) {
					msg += ", or agent: a sub-goal for the model"
				}
				return doc.Errorf(fmt.Sprintf("steps[%d]%s", at[j], e.Field[end+1:]), "%s", msg)
			}
		}
	}
	return doc.Errorf("steps", "%v", err)
}

// stand is a step as the step rules see it: which fields are set, and the
// values of wait and press. Other values are replaced, and long ones cut,
// so a file that repeats a large anchor costs nothing more here.
func stand(s browser.Step) browser.Step {
	x := func(v string) string {
		if v == "" {
			return ""
		}
		return "x"
	}
	shot := x(s.Screenshot)
	if shot != "" && safefile.CheckName(s.Screenshot) != nil {
		shot = "../x" // refused as the original is, without its length
	}
	return browser.Step{
		Click: x(s.Click), Type: x(s.Type), Text: x(s.Text), Submit: s.Submit,
		Select: x(s.Select), Option: x(s.Option), Navigate: x(s.Navigate),
		Scroll: x(s.Scroll), Press: cut(s.Press), Hover: x(s.Hover), Upload: x(s.Upload), File: cut(s.File),
		Back: s.Back, Tab: s.Tab, CloseTab: s.CloseTab, Wait: cut(s.Wait),
		Screenshot: shot, Expect: x(s.Expect),
	}
}

// cut shortens a value that no step rule accepts anyway (no key name or
// wait is this long) to what an error message should quote.
func cut(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == 32 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// setFields names a step's fields that are set, as the file writes them.
func setFields(s browser.Step) []string {
	var set []string
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).IsZero() {
			set = append(set, yamlName(v.Type().Field(i)))
		}
	}
	return set
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// nameField names an unknown field by its path and lists what the
// struct it is written in accepts.
func nameField(err error) error {
	var e *yamlconf.Error
	if !errors.As(err, &e) || e.Unknown == "" {
		return err
	}
	return &yamlconf.Error{File: e.File, Line: e.Line, Field: e.Unknown, Msg: "unknown field: use " + strings.Join(e.Accepts, ", ")}
}

// String is the duration as Go writes it, such as 1m30s.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as a string, so JSON and YAML show
// 1m30s and not nanoseconds.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a duration such as 90s or 2m (the JSON form).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML reads a duration from a YAML node. The YAML library tries
// this before UnmarshalText, and an error made here carries the node's
// position, so the message can name the line.
func (d *Duration) UnmarshalYAML(n ast.Node) error {
	for {
		t, ok := n.(*ast.TagNode)
		if !ok {
			break
		}
		n = t.Value
	}
	var text string
	switch v := n.(type) {
	case *ast.NullNode:
		*d = 0
		return nil
	case *ast.StringNode:
		text = v.Value
	case *ast.IntegerNode:
		if v.Token.Value == "0" {
			*d = 0
			return nil
		}
		return &yaml.SyntaxError{Message: fmt.Sprintf("%s has no unit: write 90s, 2m or 1h", v.Token.Value), Token: v.Token}
	default:
		return &yaml.SyntaxError{Message: "not a duration such as 90s, 2m or 1h", Token: n.GetToken()}
	}
	v, err := parseDuration(text)
	if err != nil {
		return &yaml.SyntaxError{Message: err.Error(), Token: n.GetToken()}
	}
	*d = Duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		if len(s) > 32 || !utf8.ValidString(s) {
			return 0, errors.New("not a duration such as 90s, 2m or 1h")
		}
		return 0, fmt.Errorf("%q is not a duration such as 90s, 2m or 1h", s)
	}
	return v, nil
}
