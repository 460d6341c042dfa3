package agent

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// A task's parameters make one task file serve many runs: the goal, the
// steps and the success check write {{name}}, params declares each name
// with its default, and Bind puts the values in. The task as written stays
// the template (Template): what a run learns belongs to the template, with
// the parameters as names.

const (
	// maxParamValue bounds a value: an invoice number, a name, a search,
	// not a document.
	maxParamValue = 1000
	paramNameRule = "a name is a letter or _, then letters, digits or _, 64 at most"
)

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// templateField is a field of a task that takes {{name}}: where the file
// writes it, and the value.
type templateField struct {
	field string
	s     *string
	// pattern marks a regular expression: a value goes in quoted
	// (regexp.QuoteMeta), to match as written.
	pattern bool
}

// templateFields are t's fields that take parameters and are set: the goal,
// the strings of a step its action reads, and the success check.
func (t *Task) templateFields() []templateField {
	out := []templateField{{field: "goal", s: &t.Goal}}
	for i := range t.Steps {
		s := &t.Steps[i]
		for _, f := range []struct {
			name string
			s    *string
		}{
			{"agent", &s.Agent}, {"click", &s.Click}, {"type", &s.Type}, {"text", &s.Text},
			{"select", &s.Select}, {"option", &s.Option}, {"navigate", &s.Navigate},
			{"scroll", &s.Scroll}, {"hover", &s.Hover}, {"upload", &s.Upload}, {"expect", &s.Expect},
		} {
			if *f.s != "" {
				out = append(out, templateField{field: fmt.Sprintf("steps[%d].%s", i, f.name), s: f.s})
			}
		}
	}
	if s := t.Success; s != nil {
		if s.Text != "" {
			out = append(out, templateField{field: "success.text", s: &s.Text})
		}
		if s.URL != "" {
			out = append(out, templateField{field: "success.url", s: &s.URL, pattern: true})
		}
	}
	return out
}

// fixedFields are the fields that take no parameter, where {{ is refused
// rather than left for the page to see: a start URL decides the allowed
// domain, and a key, a wait or a file name is a word the step rules read.
func (t *Task) fixedFields() map[string]string {
	out := map[string]string{"start_url": t.StartURL}
	if t.Success != nil {
		out["success.download"] = t.Success.Download
	}
	for i, s := range t.Steps {
		at := fmt.Sprintf("steps[%d].", i)
		out[at+"press"], out[at+"wait"], out[at+"screenshot"] = s.Press, s.Wait, s.Screenshot
	}
	return out
}

// paramsIn are the parameters s names, in order, or what is malformed.
func paramsIn(s string) ([]string, error) {
	var names []string
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return names, nil
		}
		s = s[i+2:]
		j := strings.Index(s, "}}")
		if j < 0 {
			return nil, errors.New("{{ is not closed: write {{name}}, with the name declared in params")
		}
		name := s[:j]
		if !paramName.MatchString(name) {
			return nil, fmt.Errorf("%s is not a parameter: %s", yamlconf.Quote("{{"+name+"}}"), paramNameRule)
		}
		names = append(names, name)
		s = s[j+2:]
	}
}

// fill puts the values in s, which paramsIn has read.
func fill(s string, values map[string]string, pattern bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i:], "}}") + i
		v := values[s[i+2:j]]
		if pattern {
			v = regexp.QuoteMeta(v)
		}
		b.WriteString(v)
		s = s[j+2:]
	}
}

// checkParamValue says what is wrong with a parameter's value, if
// anything: it goes into a prompt, a selector or a typed text as one line
// of words, and never makes a parameter or a secret's placeholder.
func checkParamValue(v string) error {
	switch {
	case len(v) > maxParamValue:
		return fmt.Errorf("the value is %d bytes, over the limit of %d", len(v), maxParamValue)
	case !utf8.ValidString(v):
		return errors.New("the value is not UTF-8 text")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return errors.New("the value holds a control character: a value is one line of text")
	case strings.Contains(v, "{{"):
		return errors.New("the value holds {{, which would read as a parameter")
	case strings.Contains(v, placeholderStart):
		return fmt.Errorf("the value holds %q, which begins a secret's placeholder: declare the secret under secrets: and write <secret:NAME> in the task", placeholderStart)
	}
	return nil
}

// checkParams checks the declared parameters, their defaults and every
// {{name}} the task writes; a default the file writes as a number or a
// boolean is taken as written (0042, not 34). It also checks learn,
// which is the template's too.
func (t *Task) checkParams(doc *yamlconf.Doc) error {
	for _, name := range slices.Sorted(maps.Keys(t.Params)) {
		if !paramName.MatchString(name) {
			return doc.Errorf("params", "%s is not a parameter name: %s", yamlconf.Quote(name), paramNameRule)
		}
		v, field := t.Params[name], "params."+name
		if v == nil {
			continue
		}
		if text, ok := doc.AsWritten(field); ok {
			*v = text
		}
		if err := checkParamValue(*v); err != nil {
			return doc.Errorf(field, "%v", err)
		}
	}
	for _, f := range t.templateFields() {
		names, err := paramsIn(*f.s)
		if err != nil {
			return doc.Errorf(f.field, "%v", err)
		}
		for _, name := range names {
			if _, ok := t.Params[name]; !ok {
				return doc.Errorf(f.field, "uses {{%s}}, which params does not declare: declare it under params: (%s: DEFAULT, or %s: ~ for a value every run must give)", name, name, name)
			}
		}
	}
	fixed := t.fixedFields()
	for _, field := range slices.Sorted(maps.Keys(fixed)) {
		if strings.Contains(fixed[field], "{{") {
			msg := "holds {{, and parameters are not put in here: they go in the goal, the steps' selectors, text, URLs and sub-goals, and success"
			if field == "start_url" {
				msg += ": open the page a parameter names with a step (navigate: /invoices/{{invoice}})"
			}
			return doc.Errorf(field, "%s", msg)
		}
	}
	switch t.Learn {
	case "", LearnOff:
	default:
		return doc.Errorf("learn", "%s: write %q to keep this task's runs from being learned or replayed, or leave it out", yamlconf.Quote(t.Learn), LearnOff)
	}
	return nil
}

// Bind returns a copy of the task with every {{name}} replaced by its
// value: the one given in values, else the task list entry's, else the
// default. A value given for a name the task does not declare, or a
// parameter left with no value, is an error (ErrUsage); in success.url
// (a regular expression) a value matches as written. The copy remembers
// its template: binding a bound task binds its template again, so no
// value of an earlier binding stays behind. A task list entry's own
// values win over those given, as its line in the list says.
func (t *Task) Bind(values map[string]string) (*Task, error) {
	base := t.Template()
	label := cmp.Or(t.File, t.Name)
	if err := base.checkParams(&yamlconf.Doc{File: label}); err != nil {
		return nil, Usage(err)
	}
	vals := make(map[string]string, len(base.Params))
	for name, def := range base.Params {
		if def != nil {
			vals[name] = *def
		}
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if _, ok := base.Params[name]; !ok {
			return nil, Usage(fmt.Errorf("%s: unknown parameter %s: %s", label, yamlconf.Quote(name), declares(base)))
		}
		if err := checkParamValue(values[name]); err != nil {
			return nil, Usage(fmt.Errorf("%s: parameter %q: %w", label, name, err))
		}
		vals[name] = values[name]
	}
	maps.Copy(vals, t.fixed) // checked when the list was read
	for _, name := range slices.Sorted(maps.Keys(base.Params)) {
		if _, ok := vals[name]; !ok {
			return nil, Usage(fmt.Errorf("%s: parameter %q has no value: give --param %s=VALUE", label, name, name))
		}
	}
	b := base.clone()
	b.Name = t.Name // a list entry's own name
	b.tmpl, b.bound, b.fixed = base, vals, t.fixed
	if t.tmpl == nil {
		// The template is kept as it is now, whatever becomes of t.
		b.tmpl = base.clone()
	}
	for _, f := range b.templateFields() {
		names, _ := paramsIn(*f.s)
		if len(names) == 0 {
			continue
		}
		*f.s = fill(*f.s, vals, f.pattern)
		// Typing nothing may be meant; a goal, a selector or a check that
		// says nothing is not (an empty success check passes on any page).
		typed := strings.HasPrefix(f.field, "steps[") && strings.HasSuffix(f.field, ".text")
		if !typed && strings.TrimSpace(*f.s) == "" {
			return nil, Usage(fmt.Errorf("%s: %s: empty once {{%s}} is put in: give %s a value (--param %s=VALUE)", label, f.field, names[0], names[0], names[0]))
		}
	}
	if s := b.Success; s != nil {
		s.url = nil
		if err := s.compile(); err != nil {
			return nil, Usage(fmt.Errorf("%s: success.url: not a regular expression once its parameters are put in: %w", label, err))
		}
	}
	return b, nil
}

// declares says which parameters t declares, for an error.
func declares(t *Task) string {
	if len(t.Params) == 0 {
		return "the task declares no parameters"
	}
	return "the task declares " + strings.Join(slices.Sorted(maps.Keys(t.Params)), ", ")
}

// Template is the task as written, with {{name}} where the values go: the
// task itself unless it was bound (Bind) or comes from a task list entry
// that gives values.
func (t *Task) Template() *Task {
	if t.tmpl != nil {
		return t.tmpl
	}
	return t
}

// Bound are the values the task was bound with, defaults included; nil
// for a task not bound.
func (t *Task) Bound() map[string]string {
	return maps.Clone(t.bound)
}

// params are the values bound, for a result; nil when none.
func (t *Task) params() map[string]string {
	if len(t.bound) == 0 {
		return nil
	}
	return maps.Clone(t.bound)
}

// withValues is the task of a list entry that gives values: t's copy,
// named for them, whose Bind puts them in.
func (t *Task) withValues(name string, values map[string]string) *Task {
	c := t.clone()
	c.Name, c.tmpl, c.fixed = name, t, values
	return c
}

// clone copies what Bind changes, and the rest a caller might; the copy
// is unbound.
func (t *Task) clone() *Task {
	c := *t
	c.AllowedDomains = slices.Clone(t.AllowedDomains)
	c.Secrets = maps.Clone(t.Secrets)
	c.Files = maps.Clone(t.Files)
	c.Steps = slices.Clone(t.Steps)
	if t.Params != nil {
		c.Params = make(map[string]*string, len(t.Params))
		for k, v := range t.Params {
			if v != nil {
				v := *v
				c.Params[k] = &v
			} else {
				c.Params[k] = nil
			}
		}
	}
	if t.Success != nil {
		s := *t.Success
		c.Success = &s
	}
	c.tmpl, c.bound, c.fixed = nil, nil, nil
	return &c
}

// listName is the name of a list entry that gives values: the task's,
// then the values, in the order of their names, as words a report, a log
// and a session key read plainly.
func listName(name string, values map[string]string) string {
	parts := []string{name}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		parts = append(parts, nameWord(values[k]))
	}
	return strings.Join(parts, "-")
}

// nameWord is a value as part of a name: letters, digits, '.', '_' and
// '-' kept, any run of others one '_', at most 40 characters.
func nameWord(v string) string {
	var b strings.Builder
	n, under := 0, false
	for _, r := range v {
		if n == 40 {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-", r) {
			b.WriteRune(r)
			n, under = n+1, false
		} else if !under {
			b.WriteByte('_')
			n, under = n+1, true
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
