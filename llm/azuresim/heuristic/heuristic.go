// Package heuristic is an offline stand-in for a model that answers the
// built-in call types from their input; see Model.
package heuristic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Model is an offline stand-in for a model, for demos and tests that
// run without Azure. It is not a model and understands nothing: it answers
// the built-in call types of package calltypes with fixed rules that match
// the words of the goal against the page in the call's input, so the same
// call always gets the same answer. That carries an agent through simple
// recorded tasks (search and open a result, fill in a form) and little more.
// It reads what a model reads: the page as calltypes.Page writes it, its
// elements and the words among them, never a site's or a task's names.
//
// The call type is the json_schema name of the call's response_format:
// "planning", "click-pick", "yes-no" or "summarize". The input is the last
// user message: the type's input written as sections (calltypes.Message),
// or as JSON. The answer is always valid JSON of the type's answer: a
// cautious one when the input cannot be read, and with its prose
// shortened when that makes it fit the call's cap, since a cut answer
// would not parse. Calls of any other type get the least answer their
// schema allows.
//
// Key words are a text's words of three letters or more, less stop words,
// lower-cased, with plain plurals folded ("results" is "result"). A goal's
// last deed is its last plan step that does something on the page ("add
// it to the cart", "show only walnut"), past any that only read something
// off it ("report the price"); an action did it when the element acted on
// (or the text typed) shares a word with it besides the goal's targets,
// and is a click when the step opens, clicks or presses (on a link when it
// names nothing to open: "open the first one"; on a button when it saves,
// sends or confirms).
//
//   - planning splits the goal (or a plain-text message) at "then", commas,
//     semicolons, sentence ends and "and" before a verb, never inside
//     quotes, into one to five steps of at most 100 bytes.
//   - click-pick reads a field with no name by the words beside it (a text
//     box's before it, a checkbox's after it) and scores each enabled
//     element by the key words its name, placeholder, value, link path and
//     type share with the goal and the current plan step. Text boxes and
//     dropdowns the goal quotes a value for (matched by the word before the
//     value, "email" in `email "a@b.c"`, "password" in `the password "…"`),
//     or gives a "search for X" phrase for, or names one of the options of
//     ("choose express delivery"), and the checkboxes the goal names, score
//     a point more and are filled (or checked) top to bottom, ahead of any
//     click while one of them is still to do; a checked box is left as it
//     is; a password field, which shows dots, holds what was typed into it.
//     A search just typed is sent with the first button after its box.
//     Buttons score half a point more once every such field holds its
//     value, the first after the last field a quarter more (not one that
//     cancels, resets or goes back), and links naming the goal's target a
//     point more once a field holds it (the search was made); anything else
//     is clicked. Of a list's like elements (one role and name, a row's or
//     a card's own copy), only those whose item (the lines since the one
//     before; see readItems) holds most of the words of the step (else of
//     the goal) that tell the items apart are candidates; none are when the
//     goal names an item by a code ("INV-1045") the page does not show
//     while every item has its own code of that form. Ties go to the lower
//     index, and the last action in the history is not repeated while
//     another element matches. It answers
//     done when the history holds a click, typing or selection but does
//     not end in typing or selecting (a form still to send) nor short of
//     the goal's last deed, no checkbox the goal names is unchecked, and
//     the page's own words (not what its fields hold) show 60% of the
//     goal's quoted values (less those labelled as passwords) or all its
//     key words (an amount of money shows a price; "cheapest" is not
//     looked for), unless a link to the goal's target is still to be
//     opened. With nothing matching, it follows a link that reads as
//     leading on to more of the same ("next page", "older posts", "skip
//     ahead"), else answers done after acting, else scrolls down once,
//     then gives up. A step that went to another page does not count as
//     the action to avoid repeating: the same index there is another
//     element.
//   - yes-no answers false to a question about the goal, asked after an
//     action, when that action did not do the goal's last deed, or typed
//     without sending; true when it did and the page marks a line as
//     changed (the one nearest the acted element is the evidence), unless
//     that line refuses ("incorrect", "required", … in words the goal does
//     not use itself). Otherwise it answers true when the page (title,
//     text, element names and values) shows all the values the question
//     quotes or, when it quotes none, 60% of those the goal and last
//     action quote and 60% of the question's key words (the goal's when
//     there is nothing else to look for).
//   - summarize answers what the goal asks (a question, or a last step
//     that reads something off the page): the lines that hold its first
//     word that means something ("price" in "report the price of …"),
//     sharing most of its words; of several amounts, the one a superlative
//     picks ("cheapest", "most expensive"); for "how many", the lines that
//     count the thing asked about ("4 pieces"). A goal that only does
//     something is answered with the line that shows what its last deed
//     did, as the step's record says it (the item it was in, what the
//     element now reads); else the lines sharing the goal's words. The
//     notes count only when the page has no such line, and the page title
//     answers when neither has.
type Model struct{}

// The built-in call types' names, as their schemas are named.
const (
	callPlanning  = "planning"
	callClickPick = "click-pick"
	callYesNo     = "yes-no"
	callSummarize = "summarize"
)

// unreadable is the reason given when the input is not the type's input.
const unreadable = "could not read the page"

// Reply answers r; see Model.
func (Model) Reply(r azuresim.Request) string {
	msg := strings.ToValidUTF8(azuresim.Echo{}.Reply(r), "\uFFFD")
	switch callType(r.ResponseFormat) {
	case callPlanning:
		goal := msg
		if in, ok := decodeInput[calltypes.PlanInput](msg); ok {
			goal = in.Goal
		} else if looksLikeJSON(msg) {
			goal = ""
		}
		p := plan(goal)
		return fit(r.MaxTokens, &p, func() bool {
			if len(p.Steps) > 1 {
				p.Steps = p.Steps[:len(p.Steps)-1]
				return true
			}
			short := p.Steps[0]
			if !shorten(&short)() || short == "" {
				return false
			}
			p.Steps[0] = short
			return true
		})
	case callClickPick:
		a := calltypes.Action{Kind: calltypes.ActDone, Index: -1, Reason: unreadable}
		if in, ok := decodeInput[calltypes.PickInput](msg); ok {
			a = pick(in, offeredActions(schemaOf(r.ResponseFormat)))
		}
		return fit(r.MaxTokens, &a, shorten(&a.Reason))
	case callYesNo:
		v := calltypes.Verdict{Reason: unreadable}
		if in, ok := decodeInput[calltypes.CheckInput](msg); ok {
			v = check(in)
		}
		return fit(r.MaxTokens, &v, shorten(&v.Reason))
	case callSummarize:
		s := calltypes.Summary{Answer: unreadable}
		if in, ok := decodeInput[calltypes.SummaryInput](msg); ok {
			s = summarize(in)
		}
		return fit(r.MaxTokens, &s, shorten(&s.Answer))
	default:
		// A type of the user's own: the least answer its schema allows,
		// so the type's path (request, schema, parse) runs offline.
		if v, ok := leastOf(schemaOf(r.ResponseFormat)); ok {
			b, _ := json.Marshal(v)
			return string(b)
		}
		return azuresim.Echo{}.Reply(r)
	}
}

// schemaOf is the JSON schema in a response_format, chat or Responses
// shape.
func schemaOf(raw json.RawMessage) map[string]any {
	var f struct {
		Schema     map[string]any `json:"schema"`
		JSONSchema struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	if f.JSONSchema.Schema != nil {
		return f.JSONSchema.Schema
	}
	return f.Schema
}

// leastOf is the smallest value a strict schema accepts: every required
// property, empty arrays and strings, zeros, false, an enum's first value.
func leastOf(s map[string]any) (any, bool) {
	if s == nil {
		return nil, false
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if c, ok := s["const"]; ok {
		return c, true
	}
	if alts, ok := s["anyOf"].([]any); ok && len(alts) > 0 {
		a, _ := alts[0].(map[string]any)
		return leastOf(a)
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			v, ok := leastOf(ps)
			if !ok {
				return nil, false
			}
			out[name] = v
		}
		return out, true
	case "array":
		return []any{}, true
	case "string":
		return "", true
	case "number", "integer":
		return 0, true
	case "boolean":
		return false, true
	case "null":
		return nil, true
	}
	return nil, false
}

// callType is the schema name in a response_format, in the chat shape
// ({"json_schema":{"name":…}}) or the Responses one ({"name":…}).
func callType(raw json.RawMessage) string {
	var f struct {
		Name       string `json:"name"`
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return ""
	}
	return cmp.Or(f.JSONSchema.Name, f.Name)
}

// decodeInput reads a call's input: its sections (calltypes.Message), or
// JSON. Prompts sometimes wrap the JSON in a sentence or a code fence, so
// the outermost braces get a second chance.
func decodeInput[T any](msg string) (T, bool) {
	var v T
	if raw, err := calltypes.ReadMessage(msg); err == nil && json.Unmarshal(raw, &v) == nil {
		return v, true
	}
	if json.Unmarshal([]byte(msg), &v) == nil {
		return v, true
	}
	i, j := strings.IndexByte(msg, '{'), strings.LastIndexByte(msg, '}')
	if i < 0 || j <= i {
		return v, false
	}
	var w T
	if json.Unmarshal([]byte(msg[i:j+1]), &w) != nil {
		return v, false
	}
	return w, true
}

func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// fit encodes v, shrinking it while the encoding is longer than the call's
// cap and shrink can still do something: a short answer that parses beats
// a long one the simulator cuts.
func fit(limit int64, v any, shrink func() bool) string {
	for {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			// Not reached: the answers are plain structs of strings.
			return "{}"
		}
		out := strings.TrimSuffix(b.String(), "\n")
		if limit <= 0 || int64(tokens.Count(out)) <= limit || !shrink() {
			return out
		}
	}
}

// shorten drops the last word of *s each call (halves it when it has no
// spaces), down to nothing.
func shorten(s *string) func() bool {
	return func() bool {
		if *s == "" {
			return false
		}
		t := strings.TrimSpace(*s)
		switch i := strings.LastIndexByte(t, ' '); {
		case i > 0:
			*s = strings.TrimRight(t[:i], " ,;:")
		case len(t) > 16:
			*s = cutText(t, len(t)/2)
		default:
			*s = ""
		}
		return true
	}
}

// cutText cuts s to at most n bytes, at a word boundary when one is near.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if j := strings.LastIndexByte(s[:i], ' '); j > n/2 {
		i = j
	}
	return strings.TrimRightFunc(s[:i], func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' })
}
