package pageview

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// The page as prompts carried it before the view: a JSON object of the
// interactive elements (each an object of its fields) and, apart from
// them, the page's text, cut to 2,000 o200k tokens by dropping the text
// first, word by word from its end, then the elements from the end. It
// is kept here, and only here, as the baseline the view is measured
// against; with it, the built-ins' system prompts of the time, which
// described a JSON user message.

// legacyCap is the page cap of the time, for every type alike.
const legacyCap = 2000

type legacyPage struct {
	URL      string          `json:"url"`
	Title    string          `json:"title"`
	Elements []legacyElement `json:"elements,omitempty"`
	Text     string          `json:"text,omitempty"`
	Cut      string          `json:"cut,omitempty"`
}

type legacyElement struct {
	Index       int      `json:"index"`
	Role        string   `json:"role,omitempty"`
	Name        string   `json:"name,omitempty"`
	Tag         string   `json:"tag,omitempty"`
	Type        string   `json:"type,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Href        string   `json:"href,omitempty"`
	Value       string   `json:"value,omitempty"`
	Options     []string `json:"options,omitempty"`
	Checked     bool     `json:"checked,omitempty"`
	Disabled    bool     `json:"disabled,omitempty"`
	Hidden      bool     `json:"hidden,omitempty"`
	Offscreen   bool     `json:"offscreen,omitempty"`
}

// legacyOf is the snapshot as the JSON page of the time, within its cap;
// withElements false is the summary's page, its text alone.
func legacyOf(s *browser.Snapshot, withElements bool) legacyPage {
	text := strings.TrimSpace(s.Text)
	words := len(strings.Fields(text))
	var els []legacyElement
	if withElements {
		for _, e := range s.Elements {
			els = append(els, legacyElementOf(e))
		}
	}
	keep := func(w, e int) legacyPage {
		p := legacyPage{URL: s.URL, Title: clip(s.Title, 80), Text: firstWords(text, w), Elements: els[:e]}
		var cut []string
		if n := len(els) - e; n > 0 {
			cut = append(cut, fmt.Sprintf("%d more elements", n))
		}
		if n := words - w; n > 0 {
			cut = append(cut, fmt.Sprintf("%d more words of text", n))
		}
		if len(cut) > 0 {
			p.Cut = "[truncated: " + strings.Join(cut, ", ") + "; scroll or extract to see more]"
		}
		return p
	}
	fits := func(p legacyPage) bool { return tokens.Count(mustJSON(p)) <= legacyCap }
	if p := keep(words, len(els)); fits(p) {
		return p
	}
	if fits(keep(0, len(els))) {
		return keep(largest(words, func(n int) bool { return fits(keep(n, len(els))) }), len(els))
	}
	return keep(0, largest(len(els), func(n int) bool { return fits(keep(0, n)) }))
}

func legacyElementOf(e browser.Element) legacyElement {
	out := legacyElement{Index: e.Index, Role: e.Role, Name: clip(e.Name, 80), Tag: e.Tag, Type: e.Type,
		Placeholder: clip(e.Placeholder, 80), Href: clip(e.Href, 80), Value: clip(e.Value, 80),
		Checked: e.Checked, Disabled: e.Disabled, Hidden: !e.Visible, Offscreen: e.Offscreen}
	if out.Placeholder == out.Name {
		out.Placeholder = ""
	}
	for i, o := range e.Options {
		if i == 50 {
			break
		}
		out.Options = append(out.Options, clip(o, 40))
	}
	return out
}

// legacySystem are the built-ins' system prompts of the time.
var legacySystem = map[string]string{
	"planning": `You plan how a browser agent will reach a goal on a website.
The user message is JSON: the goal and the page the agent is on (url, title, its interactive elements by index, and its visible text).
Reply with 1 to 8 steps in the order the agent should take them. Each step is one short instruction of at most 120 characters, naming what to click, type or read; do not number them. Plan only what the pages can do, and end with the step that yields what the goal asks for.`,
	"click-pick": `You choose a browser agent's next action toward a goal.
The user message is JSON: the goal, the plan and the current step (counted from 0), the page (url, title, its interactive elements by index, and its visible text), notes on older steps and the last steps taken, each written as: action [index] "text" on the element → what happened.
Reply with one action:
- click: index is the element to click.
- type: index is the input, text is what to type into it; submit is true to press Enter after it (a search box), false otherwise.
- select: index is the drop-down, text is one of its options.
- scroll: text is "up" or "down"; or index is an element to bring into view, with text empty.
- navigate: text is the full URL to open.
- done: the goal is met, or cannot be met on this site; reason says which.
Use only indexes listed in the page's elements; index is -1 when the action has no element. text is at most 300 characters and empty when the action needs none. reason says in at most 200 characters why this action moves toward the goal.`,
	"yes-no": `You check a browser agent's progress.
The user message is JSON: a question (did the last action achieve what it meant to, or is the goal met), the goal, the last action and the page as it is now (url, title, its interactive elements by index, and its visible text).
Answer true only if the page shows it, false otherwise. reason gives the evidence from the page in at most 150 characters.`,
	"summarize": `You write the final answer of a browser task.
The user message is JSON: the goal, the page the task ended on (url, title, its interactive elements by index, and its visible text) and notes from earlier steps, oldest first.
Answer what the goal asks, using only the page and the notes; give the values it asks for exactly as they appear. If the answer is not there, say so and say what was found instead. At most 2000 characters, no preamble.`,
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings, numbers and bools
	}
	return string(b)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// firstWords keeps the first n words of text, and its line breaks.
func firstWords(text string, n int) string {
	if n <= 0 {
		return ""
	}
	count, in := 0, false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if !space && !in {
			if count == n {
				return strings.TrimSpace(text[:i])
			}
			count++
		}
		in = !space
	}
	return text
}

// largest is the largest n in [0, max] with fits(n), fits being monotone.
func largest(max int, fits func(int) bool) int {
	lo, hi := 0, max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
