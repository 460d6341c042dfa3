// Package calltypes holds the registry of call types: for every kind of
// model call an agent makes, the answer cap (max_tokens), n, temperature,
// priority class, system prompt, answer schema and parser.
//
// Azure OpenAI charges a deployment's rate limit on the cap a call
// declares, not on what the answer uses, so the cap belongs to the type and
// is sized to the longest answer the type's schema allows. A caller never
// picks max_tokens per call.
package calltypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Priority is a call's class when the budget is short: interactive calls
// are served before background ones.
type Priority string

// Priority classes.
const (
	Interactive Priority = "interactive"
	Background  Priority = "background"
)

// DefaultModelLimit is the output limit of gpt-4o: no cap may exceed the
// model's own, or every call of the type would be refused.
const DefaultModelLimit int64 = 16384

// Type is one kind of model call.
type Type struct {
	Name string
	// MaxTokens is the answer cap sent as max_tokens. Azure charges it
	// against the deployment's tokens per minute when the call arrives,
	// whatever the answer then uses.
	MaxTokens int64
	// N is the number of choices; 0 means 1. More than one multiplies the
	// charged cap, so it needs AllowN.
	N int64
	// AllowN is the explicit opt-in to N > 1.
	AllowN bool
	// Temperature is sent to chat models; reasoning models take only
	// their default, so none is sent to them.
	Temperature float64
	Priority    Priority // "" means Interactive
	// ReasoningEffort is the reasoning_effort sent to a reasoning model
	// (minimal, low, medium, high); "" means low. A model that does not
	// take minimal gets low.
	ReasoningEffort string
	// ReasoningTokens is the room given to reasoning on a reasoning
	// model, on top of MaxTokens (the visible answer's cap): the cap sent
	// as max_completion_tokens, and reserved, is their sum. 0 means the
	// allowance of the effort (see llm.ReasoningAllowance).
	ReasoningTokens int64
	// Fallback names the pool (a smaller or different model) that serves
	// the type's calls when the default pool cannot in time; "" is the
	// config's fallback, if any.
	Fallback string
	// System is the system prompt.
	System string
	// Schema is the JSON schema of the answer, sent as a strict
	// structured output: every object has "additionalProperties": false and
	// lists all its properties in "required". Treat it as read-only once
	// registered.
	Schema map[string]any
	// Parse turns the model's text into the answer value; its error says
	// what is wrong in words a model can act on (it is sent back once as a
	// repair request).
	Parse func(text string) (any, error)
	// Mend, when set, is asked about an answer Parse refused: when the
	// fault is a slip it can fix without guessing (a field the answer's
	// kind gives no meaning, a number written as a string), it returns
	// the value fixed and the fixes, a short phrase each. The caller
	// takes such an answer, counts it as mended and sends no repair
	// request; one Mend refuses too gets the repair request, with Mend's
	// error (what is still wrong once the slips are fixed). nil: every
	// answer Parse refuses gets it. JSONMender builds one to go with
	// JSONParser.
	Mend func(text string) (value any, mends []string, err error)
	// Input, when set, checks a call's input (as JSON) before anything
	// is reserved or sent; its error should be an *InputError naming the
	// field. JSONInput gives one; nil accepts any input.
	Input func(in json.RawMessage) error
	// Message writes the user message from the call's input (as JSON);
	// nil sends the JSON itself. The built-ins write sections (Message),
	// which spend no tokens on JSON's quotes and escapes.
	Message func(in json.RawMessage) string
	// View is what the type's calls read of the page, when their input
	// holds one, and PageTokens caps it in o200k tokens: the larger part
	// of what a call reserves is its page. "" and 0 are ViewWords and
	// DefaultPageTokens.
	View       View
	PageTokens int
	// Vision says when the type's calls carry the page's screenshot, at
	// Detail, scaled to at most ImagePixels: "", "" and 0 are
	// VisionNever, DefaultDetail and DefaultImagePixels (see vision.go).
	Vision      Vision
	Detail      string
	ImagePixels int
	// ServiceTier is the tier the type's calls ask for: "" (the
	// default), TierFlex or TierPriority.
	ServiceTier string
	// Steady names the input's fields that stay the same for a task, in
	// the order they lead its message (see StablePrefix).
	Steady []string
}

// DefaultPageTokens caps the page of a type that sets no cap of its own;
// MinPageTokens is the least cap a type may set: its url, title and a
// few lines.
const (
	DefaultPageTokens = 2000
	MinPageTokens     = 100
)

// efforts are the reasoning efforts, least first.
var efforts = []string{"minimal", "low", "medium", "high"}

// IsEffort reports whether e is a reasoning effort: minimal, low, medium
// or high.
func IsEffort(e string) bool { return slices.Contains(efforts, e) }

// Override is a config file's change to a registered type. Zero fields
// keep the type's value; AllowN can grant the opt-in to n > 1, not take it
// back.
type Override struct {
	MaxTokens   int64    `yaml:"max_tokens" json:"max_tokens"`
	N           int64    `yaml:"n" json:"n"`
	AllowN      bool     `yaml:"allow_n" json:"allow_n"`
	Temperature *float64 `yaml:"temperature" json:"temperature"`
	Priority    Priority `yaml:"priority" json:"priority"`
	// ReasoningEffort and ReasoningTokens apply on reasoning models.
	ReasoningEffort string `yaml:"reasoning_effort" json:"reasoning_effort"`
	ReasoningTokens int64  `yaml:"reasoning_tokens" json:"reasoning_tokens"`
	// Fallback names the type's fallback pool.
	Fallback string `yaml:"fallback" json:"fallback,omitempty"`
	// View and PageTokens change what the type's calls read of the page
	// and its cap.
	View       View `yaml:"view" json:"view,omitempty"`
	PageTokens int  `yaml:"page_tokens" json:"page_tokens,omitempty"`
	// Vision, Detail and ImagePixels say when the type's calls carry the
	// page's screenshot and at what size; ServiceTier the tier they ask
	// for.
	Vision      Vision `yaml:"vision" json:"vision,omitempty"`
	Detail      string `yaml:"detail" json:"detail,omitempty"`
	ImagePixels int    `yaml:"image_pixels" json:"image_pixels,omitempty"`
	ServiceTier string `yaml:"service_tier" json:"service_tier,omitempty"`
	// System and Schema define a new type (Define): its system prompt and
	// the JSON schema of its answer, sent as a strict structured output.
	// A registered type cannot take them.
	System string         `yaml:"system" json:"system,omitempty"`
	Schema map[string]any `yaml:"schema" json:"schema,omitempty"`
}

// Defines reports whether o defines a type rather than changing one.
func (o Override) Defines() bool { return o.System != "" || o.Schema != nil }

// Registry holds call types by name. It is safe for concurrent use; the
// zero value is an empty registry with the default model limit.
type Registry struct {
	// Logf, when set, receives what an operator should know about the
	// registry: a type that opts in to n > 1, or a model limit set below a
	// registered cap. Set it before sharing the registry.
	Logf func(format string, args ...any)

	mu    sync.RWMutex
	limit int64 // 0 means DefaultModelLimit
	types []Type
	index map[string]int
}

// NewRegistry returns an empty registry whose model limit is
// DefaultModelLimit.
func NewRegistry() *Registry {
	return &Registry{}
}

// Default returns a new registry holding the four built-in types.
func Default() *Registry {
	r := NewRegistry()
	for _, t := range builtins() {
		if err := r.Register(t); err != nil {
			// The built-ins are constants of this package; a test covers them.
			panic(err)
		}
	}
	return r
}

// SetModelLimit sets the largest cap a type may have: the output limit of
// the model behind the deployments. n <= 0 restores DefaultModelLimit. It
// applies to later Register and Override calls; a registered type above
// the new limit is reported to Logf, since its calls would be refused.
func (r *Registry) SetModelLimit(n int64) {
	if n <= 0 {
		n = DefaultModelLimit
	}
	var notes []string
	r.mu.Lock()
	r.limit = n
	for _, t := range r.types {
		if t.MaxTokens > n {
			notes = append(notes, fmt.Sprintf("calltypes: %s has max_tokens %d, above the model limit %d: override it to at most %d", t.Name, t.MaxTokens, n, n))
		}
	}
	r.mu.Unlock()
	r.log(notes...)
}

// ModelLimit returns the largest cap a type may have.
func (r *Registry) ModelLimit() int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.modelLimit()
}

func (r *Registry) modelLimit() int64 {
	if r.limit <= 0 {
		return DefaultModelLimit
	}
	return r.limit
}

// Register adds t, reading N 0 as 1 and Priority "" as Interactive. It
// refuses what would fail at call time or spend more than it says: an
// empty, malformed or taken name; a cap outside 1 to the model limit; N > 1
// without AllowN; a temperature outside 0 to 2; no Parse or Schema; a
// schema strict structured outputs reject; an unknown priority.
func (r *Registry) Register(t Type) error {
	r.mu.Lock()
	if _, dup := r.index[t.Name]; dup {
		r.mu.Unlock()
		return fmt.Errorf("calltypes: %q is already registered: pick another name, or change it with Override", t.Name)
	}
	t, err := check(t, r.modelLimit())
	if err != nil {
		r.mu.Unlock()
		return err
	}
	if r.index == nil {
		r.index = make(map[string]int)
	}
	r.index[t.Name] = len(r.types)
	r.types = append(r.types, t)
	r.mu.Unlock()
	r.log(noteN(t)...)
	return nil
}

// Lookup returns the type called name.
func (r *Registry) Lookup(name string) (Type, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.index[name]
	if !ok {
		return Type{}, false
	}
	return r.types[i], true
}

// Types returns every type in registration order.
func (r *Registry) Types() []Type {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.types)
}

// Override changes the registered type called name, as a config file asks.
// The result must pass the same checks as Register; on error the type is
// unchanged. The type keeps its place in Types.
func (r *Registry) Override(name string, o Override) error {
	r.mu.Lock()
	i, ok := r.index[name]
	if !ok {
		names := make([]string, len(r.types))
		for j, t := range r.types {
			names[j] = t.Name
		}
		r.mu.Unlock()
		return fmt.Errorf("calltypes: no call type %q to override (to define one, give it a system prompt and a schema); known types: %s", name, strings.Join(names, ", "))
	}
	t := r.types[i]
	if o.Defines() {
		r.mu.Unlock()
		return fmt.Errorf("calltypes: %s is a registered type: it takes changes (max_tokens, priority, ...), not a system prompt or a schema; to define a type of your own, give it a new name", name)
	}
	if o.MaxTokens != 0 {
		t.MaxTokens = o.MaxTokens
	}
	if o.N != 0 {
		t.N = o.N
	}
	t.AllowN = t.AllowN || o.AllowN
	if o.Temperature != nil {
		t.Temperature = *o.Temperature
	}
	if o.Priority != "" {
		t.Priority = o.Priority
	}
	if o.ReasoningEffort != "" {
		t.ReasoningEffort = o.ReasoningEffort
	}
	if o.ReasoningTokens != 0 {
		t.ReasoningTokens = o.ReasoningTokens
	}
	if o.Fallback != "" {
		t.Fallback = o.Fallback
	}
	if o.View != "" {
		t.View = o.View
	}
	if o.PageTokens != 0 {
		t.PageTokens = o.PageTokens
	}
	if o.Vision != "" {
		t.Vision = o.Vision
	}
	if o.Detail != "" {
		t.Detail = o.Detail
	}
	if o.ImagePixels != 0 {
		t.ImagePixels = o.ImagePixels
	}
	if o.ServiceTier != "" {
		t.ServiceTier = o.ServiceTier
	}
	t, err := check(t, r.modelLimit())
	if err == nil {
		r.types[i] = t
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	r.log(noteN(t)...)
	return nil
}

// Define registers a type known only by its definition, as a config
// gives it: its system prompt and JSON schema, a cap and the rest as an
// Override names them. Its answers are checked against the schema
// (SchemaParser) and returned as decoded JSON; its input is any JSON
// object. It is validated as Register validates.
func (r *Registry) Define(name string, o Override) error {
	if o.System == "" {
		return fmt.Errorf("calltypes: %s: a defined type needs a system prompt (system): what the model is to do with the input", name)
	}
	if o.Schema == nil {
		return fmt.Errorf("calltypes: %s: a defined type needs a schema: the JSON schema of its answer", name)
	}
	// As decoded JSON, whatever decoded it (YAML gives other number types).
	raw, err := json.Marshal(o.Schema)
	if err == nil {
		o.Schema = nil
		err = json.Unmarshal(raw, &o.Schema)
	}
	if err != nil {
		return fmt.Errorf("calltypes: %s: schema: %v", name, err)
	}
	t := Type{
		Name: name, MaxTokens: o.MaxTokens, N: o.N, AllowN: o.AllowN, Priority: o.Priority,
		System: o.System, Schema: o.Schema, ReasoningEffort: o.ReasoningEffort, ReasoningTokens: o.ReasoningTokens, Fallback: o.Fallback,
		View: o.View, PageTokens: o.PageTokens, Input: anyObject,
		Vision: o.Vision, Detail: o.Detail, ImagePixels: o.ImagePixels, ServiceTier: o.ServiceTier,
	}
	if o.Temperature != nil {
		t.Temperature = *o.Temperature
	}
	if err := checkSchema(o.Schema); err != nil { // the strict rules first: they say what Azure would refuse
		return fmt.Errorf("calltypes: %s: schema: %v", name, err)
	}
	parse, err := SchemaParser(o.Schema)
	if err != nil {
		return fmt.Errorf("calltypes: %s: schema: %v", name, err)
	}
	t.Parse = parse
	return r.Register(t)
}

// anyObject takes any JSON object as a defined type's input.
func anyObject(in json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil || m == nil {
		return &InputError{Problem: "is not a JSON object"}
	}
	return nil
}

// noteN records the opt-in to n > 1, which multiplies what every call of
// the type is charged.
func noteN(t Type) []string {
	if t.N <= 1 {
		return nil
	}
	return []string{fmt.Sprintf("calltypes: %s asks for n=%d (allow_n): each call is charged %d x max_tokens %d = %d tokens", t.Name, t.N, t.N, t.MaxTokens, t.N*t.MaxTokens)}
}

// log hands notes to Logf outside the lock, so Logf may use the registry.
func (r *Registry) log(notes ...string) {
	if r.Logf == nil {
		return
	}
	for _, n := range notes {
		r.Logf("%s", n)
	}
}

// validName is what Azure accepts as a structured output's name, which
// is where a type's name goes.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether name can name a call type: 1 to 64 letters,
// digits, '_' or '-'.
func ValidName(name string) bool { return validName.MatchString(name) }

// check validates t and fills in its defaults (N 0 → 1, Priority "" →
// Interactive).
func check(t Type, limit int64) (Type, error) {
	if t.Name == "" {
		return t, errors.New("calltypes: a call type needs a name")
	}
	if !validName.MatchString(t.Name) {
		return t, fmt.Errorf("calltypes: name %q is not usable as a structured output name: use 1 to 64 letters, digits, '_' or '-'", t.Name)
	}
	fail := func(format string, args ...any) (Type, error) {
		return t, fmt.Errorf("calltypes: %s: "+format, append([]any{t.Name}, args...)...)
	}
	switch {
	case t.MaxTokens <= 0:
		return fail("max_tokens %d is not positive: set it to the tokens of the longest answer the schema allows", t.MaxTokens)
	case t.MaxTokens > limit:
		return fail("max_tokens %d is above the model's output limit %d: lower it, or raise the limit with SetModelLimit if the model allows more", t.MaxTokens, limit)
	case t.N < 0:
		return fail("n %d is negative: use 1", t.N)
	case t.N > 1 && !t.AllowN:
		return fail("n %d needs allow_n: every extra choice is charged max_tokens again; set allow_n to opt in, or use n 1", t.N)
	case math.IsNaN(t.Temperature) || t.Temperature < 0 || t.Temperature > 2:
		return fail("temperature %v is outside 0 to 2", t.Temperature)
	case t.ReasoningEffort != "" && !IsEffort(t.ReasoningEffort):
		return fail("reasoning_effort %q is unknown: use minimal, low, medium or high", t.ReasoningEffort)
	case t.ReasoningTokens < 0:
		return fail("reasoning_tokens %d is negative: leave it out for the effort's allowance", t.ReasoningTokens)
	case t.MaxTokens+t.ReasoningTokens > limit:
		return fail("max_tokens %d and reasoning_tokens %d make %d, above the model's output limit %d", t.MaxTokens, t.ReasoningTokens, t.MaxTokens+t.ReasoningTokens, limit)
	case t.View != "" && !t.View.Valid():
		return fail("view %q is unknown: use page, changes or words", t.View)
	case t.PageTokens < 0:
		return fail("page_tokens %d is negative: leave it out for %d", t.PageTokens, DefaultPageTokens)
	case t.PageTokens > 0 && t.PageTokens < MinPageTokens:
		return fail("page_tokens %d leaves no room for a page: give at least %d", t.PageTokens, MinPageTokens)
	case t.Parse == nil:
		return fail("no Parse func: set one (JSONParser builds it from the answer's Go type)")
	case t.Schema == nil:
		return fail("no Schema: the answer's JSON schema is sent as a strict structured output")
	}
	if t.N == 0 {
		t.N = 1
	}
	if t.View == "" {
		t.View = ViewWords
	}
	if t.PageTokens == 0 {
		t.PageTokens = DefaultPageTokens
	}
	t, err := checkVision(t)
	if err != nil {
		return fail("%v", err)
	}
	switch t.Priority {
	case "":
		t.Priority = Interactive
	case Interactive, Background:
	default:
		return fail("priority %q is unknown: use %q or %q", t.Priority, Interactive, Background)
	}
	if err := checkSchema(t.Schema); err != nil {
		return fail("schema: %v", err)
	}
	return t, nil
}

// checkSchema refuses what Azure's strict structured outputs refuse with a
// 400 at call time: a root that is not an object, and an object that allows
// more properties or leaves one out of "required". It looks into
// properties, items, anyOf, $defs and definitions.
func checkSchema(s map[string]any) error {
	if !isObject(s) {
		return errors.New(`the root must be {"type": "object", ...}`)
	}
	return walkSchema(s, "#")
}

func walkSchema(s map[string]any, at string) error {
	props, _ := s["properties"].(map[string]any)
	if isObject(s) || props != nil {
		if ap, ok := s["additionalProperties"].(bool); !ok || ap {
			return fmt.Errorf(`%s: set "additionalProperties": false`, at)
		}
		req := stringList(s["required"])
		for _, name := range sortedKeys(props) {
			if !slices.Contains(req, name) {
				return fmt.Errorf(`%s: property %q is not in "required"; strict outputs need every property listed (make it nullable to leave it empty)`, at, name)
			}
		}
		for _, name := range req {
			if _, ok := props[name]; !ok {
				return fmt.Errorf(`%s: "required" names %q, which is not in "properties"`, at, name)
			}
		}
		for _, name := range sortedKeys(props) {
			if sub, ok := props[name].(map[string]any); ok {
				if err := walkSchema(sub, at+"/properties/"+name); err != nil {
					return err
				}
			}
		}
	}
	if sub, ok := s["items"].(map[string]any); ok {
		if err := walkSchema(sub, at+"/items"); err != nil {
			return err
		}
	}
	for i, sub := range schemaList(s["anyOf"]) {
		if err := walkSchema(sub, fmt.Sprintf("%s/anyOf/%d", at, i)); err != nil {
			return err
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := s[key].(map[string]any)
		for _, name := range sortedKeys(defs) {
			if sub, ok := defs[name].(map[string]any); ok {
				if err := walkSchema(sub, at+"/"+key+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isObject reports whether s is an object schema ("type": "object", or a
// type list holding "object").
func isObject(s map[string]any) bool {
	return slices.Contains(stringList(s["type"]), "object")
}

// stringList reads a string or a list of strings, in either of the shapes
// a Go-built schema uses.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []string:
		return v
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func schemaList(v any) []map[string]any {
	switch v := v.(type) {
	case []map[string]any:
		return v
	case []any:
		var out []map[string]any
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
