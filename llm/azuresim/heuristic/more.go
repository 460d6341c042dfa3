package heuristic

import (
	"regexp"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
)

// The actions beyond clicks and fields: a file to give a file field, and
// an action the request offers that the stand-in has no rule of its own
// for (one a user registered), taken when the goal names it.

// isFileInput is a file field: clicking one opens a chooser no agent can
// use; it takes an upload.
func isFileInput(e calltypes.Element) bool { return lower(e.Type) == "file" }

// filePlaceholders are the files a pick may upload, as written in its
// input's files note.
var filePlaceholders = regexp.MustCompile(`<file:[A-Za-z0-9_.-]+>`)

// uploadFile gives the first file field still empty the task's file the
// goal or the field names best, when the task declares any.
func uploadFile(els []calltypes.Element, note string, g goalInfo, history []calltypes.Taken) (calltypes.Action, bool) {
	files := slices.DeleteFunc(filePlaceholders.FindAllString(note, -1), func(f string) bool { return f == "<file:NAME>" })
	if len(files) == 0 {
		return calltypes.Action{}, false
	}
	given := map[int]bool{}
	for _, h := range history {
		if h.Action.Kind == calltypes.ActUpload && !strings.HasPrefix(h.Outcome, "failed") {
			given[h.Action.Index] = true
		}
	}
	for _, e := range els {
		if !usable(e) || !isFileInput(e) || given[e.Index] {
			continue
		}
		best, score := files[0], -1
		for _, f := range files {
			s := 0
			for _, w := range keywords(strings.NewReplacer("<file:", " ", ">", " ", "_", " ", "-", " ", ".", " ").Replace(f)) {
				if g.words[w] || slices.Contains(elementWords(e), w) {
					s++
				}
			}
			if s > score {
				best, score = f, s
			}
		}
		return calltypes.Action{Kind: calltypes.ActUpload, Index: e.Index, Text: best,
			Reason: "give the " + describe(e) + " the file " + best}, true
	}
	return calltypes.Action{}, false
}

// stockActions are those the stand-in's own rules take.
var stockActions = []string{
	calltypes.ActClick, calltypes.ActType, calltypes.ActSelect, calltypes.ActScroll,
	calltypes.ActNavigate, calltypes.ActPress, calltypes.ActHover, calltypes.ActBack,
	calltypes.ActWait, calltypes.ActUpload, calltypes.ActTab, calltypes.ActCloseTab, calltypes.ActDone,
}

// ownAction takes an offered action of no stock kind whose every word
// (solve-captcha: solve, captcha) the goal says, once, on the element
// that names the action's words best, then the goal's (-1 when none
// does; an action that takes no element has its index dropped as a slip).
func ownAction(offered []string, g goalInfo, els []calltypes.Element, history []calltypes.Taken) (calltypes.Action, bool) {
	for _, name := range offered {
		if slices.Contains(stockActions, name) || slices.ContainsFunc(history, func(h calltypes.Taken) bool { return h.Action.Kind == name }) {
			continue
		}
		words := keywords(strings.ReplaceAll(name, "-", " "))
		if len(words) == 0 || slices.ContainsFunc(words, func(w string) bool { return !g.words[w] }) {
			continue
		}
		a := calltypes.Action{Kind: name, Index: -1, Reason: "the goal asks to " + strings.ReplaceAll(name, "-", " ")}
		best := 0
		for _, e := range els {
			s := 0
			for _, w := range elementWords(e) {
				if slices.Contains(words, w) {
					s += 2
				} else if g.words[w] {
					s++
				}
			}
			if usable(e) && s > best {
				a.Index, best = e.Index, s
			}
		}
		return a, true
	}
	return calltypes.Action{}, false
}

// offeredActions are the actions a click-pick request's schema offers.
func offeredActions(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	action, _ := props["action"].(map[string]any)
	enum, _ := action["enum"].([]any)
	var names []string
	for _, v := range enum {
		if s, ok := v.(string); ok {
			names = append(names, s)
		}
	}
	return names
}

// tryKeys presses Enter on what a click just focused when the click did
// nothing at all: a widget that answers the keyboard and not the mouse (a
// menu button, a menu's item), as a person tries the keyboard next.
func tryKeys(history []calltypes.Taken) (calltypes.Action, bool) {
	if len(history) == 0 {
		return calltypes.Action{}, false
	}
	last := history[len(history)-1]
	widget := hasPrefixFold(last.Element, "button") || hasPrefixFold(last.Element, "menuitem")
	if last.Action.Kind != calltypes.ActClick || last.Outcome != "nothing" || !widget {
		return calltypes.Action{}, false
	}
	return calltypes.Action{Kind: calltypes.ActPress, Index: -1, Text: "Enter",
		Reason: "the click on the " + last.Element + " did nothing: try the keyboard on it"}, true
}
