package calltypes

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Action kinds of the built-in actions.
const (
	ActClick    = "click"
	ActType     = "type"
	ActSelect   = "select"
	ActScroll   = "scroll"
	ActNavigate = "navigate"
	ActPress    = "press"
	ActHover    = "hover"
	ActBack     = "back"
	ActWait     = "wait"
	ActUpload   = "upload"
	ActTab      = "tab"
	ActCloseTab = "close-tab"
	ActDone     = "done"
)

// builtinActions are what a person does on a page, in the order
// click-pick lists them: the five a step most often takes first, the rest
// after, done last. upload, tab and close-tab are told of where they
// apply (Where): every call pays for the list, few have files or tabs.
//
//	action    takes            why it is one
//	click     element          links, buttons, checkboxes, focusing a field
//	type      element, text    a field's whole value; submit = Enter after it
//	select    element, text    a drop-down's option, by its words
//	scroll    element or text  up/down a screen, or to an element
//	navigate  text             a URL the page gives no link to
//	press     text             keyboard widgets: Escape, arrows, Enter, chords
//	hover     element          menus and tips that open under the mouse
//	back      -                the previous page, when a link led astray
//	wait      -                a page still answering what the last action started
//	upload    element, text    a file the task declares, named as <file:NAME>
//	tab       text             another open tab, by the number the view gives it
//	close-tab -                a popup done with, back to the tab that opened it
//	done      -                the goal met, or not to be met here
func builtinActions() []ActionSpec {
	return []ActionSpec{
		{Name: ActClick, Element: Required,
			Describe: "an element (a link, button, checkbox, a field to focus)"},
		{Name: ActType, Element: Required, Text: Required, TextIs: "what to type", Submit: true,
			Describe: "text into a field (submit presses Enter, as a search wants)",
			Write:    writeType, Scan: scanType},
		{Name: ActSelect, Element: Required, Text: Required, TextIs: "the option to select",
			Describe: "one of a drop-down's options as text"},
		{Name: ActScroll, Element: Optional, Text: Optional, TextIs: "up/down to scroll",
			Describe: `text "up" or "down", or to an element`,
			Check:    checkScroll, Write: writeScroll, Scan: scanScroll},
		{Name: ActNavigate, Text: Required, TextIs: "the URL to open",
			Describe: "to the URL in text"},
		{Name: ActPress, Text: Required, TextIs: "the key to press",
			Describe: "a key or chord as text (Enter, Escape, ArrowDown, Ctrl+A)",
			Check:    checkKey},
		{Name: ActHover, Element: Required,
			Describe: "over an element whose menu opens under the mouse"},
		{Name: ActBack,
			Describe: "to the previous page"},
		{Name: ActWait,
			Describe: "for a page still changing after the last action"},
		{Name: ActUpload, Element: Required, Text: Required, TextIs: "the file as <file:NAME>",
			Describe: "a file the task declares into a file field, text <file:NAME>", Where: "the input's files",
			Check: checkUpload, Mend: mendUpload, Write: writeUpload, Scan: scanUpload},
		{Name: ActTab, Text: Required, TextIs: "the tab's number",
			Describe: "switch to the open tab whose number is text", Where: "the page's note of open tabs",
			Check: checkTab},
		{Name: ActCloseTab,
			Describe: "close this tab, a popup, back to the tab that opened it", Where: "the page's note of open tabs"},
		{Name: ActDone,
			Describe: "when the goal is met or cannot be met here (reason says which)"},
	}
}

func writeType(a Action) string {
	s := "type [" + strconv.Itoa(a.Index) + "] " + strconv.Quote(a.Text)
	if a.Submit {
		s += " and submit"
	}
	return s
}

func scanType(rest string) (Action, string, error) {
	a := Action{Kind: ActType}
	var err error
	if a.Index, rest, err = scanIndex(rest); err != nil {
		return Action{}, "", err
	}
	if a.Text, rest, err = scanQuoted(strings.TrimPrefix(rest, " ")); err != nil {
		return Action{}, "", err
	}
	if strings.HasPrefix(rest, " and submit") {
		a.Submit, rest = true, strings.TrimPrefix(rest, " and submit")
	}
	return a, rest, nil
}

func checkScroll(a Action) error {
	if a.Text != "up" && a.Text != "down" && !(a.Text == "" && a.Index >= 0) {
		return fmt.Errorf(`scroll needs text "up" or "down", or the index of an element to scroll to with empty text; got text %q and index %d`, a.Text, a.Index)
	}
	return nil
}

func writeScroll(a Action) string {
	if a.Text == "" {
		return "scroll to [" + strconv.Itoa(a.Index) + "]"
	}
	return "scroll " + a.Text
}

func scanScroll(rest string) (Action, string, error) {
	a := Action{Kind: ActScroll, Index: -1}
	var err error
	switch {
	case strings.HasPrefix(rest, "to "):
		a.Index, rest, err = scanIndex(rest[3:])
	case strings.HasPrefix(rest, "up"), strings.HasPrefix(rest, "down"):
		a.Text, rest, _ = strings.Cut(rest, " ")
		if rest != "" {
			rest = " " + rest
		}
		if a.Text != "up" && a.Text != "down" {
			err = fmt.Errorf("%q is not up or down", a.Text)
		}
	default:
		err = errors.New(`scroll is followed by up, down or "to [index]"`)
	}
	return a, rest, err
}

// checkKey refuses what cannot name a key; which names the browser knows
// it checks when it presses.
func checkKey(a Action) error {
	if len(a.Text) > 32 || strings.ContainsAny(a.Text, " \t\n") {
		return fmt.Errorf("press needs one key or chord as text, such as Enter, Escape or Ctrl+A; got %q", a.Text)
	}
	return nil
}

// fileText is how a pick names the declared file name: <file:NAME>.
func fileText(name string) string { return "<file:" + name + ">" }

// filePlaceholderRE is an upload's text: a declared file by its name.
var filePlaceholderRE = regexp.MustCompile(`^<file:([A-Za-z0-9_.-]{1,64})>`)

func checkUpload(a Action) error {
	if m := filePlaceholderRE.FindString(a.Text); m == "" || m != a.Text {
		return fmt.Errorf("upload needs text <file:NAME>, NAME one of the task's files; got %q", a.Text)
	}
	return nil
}

// mendUpload names a file given bare ("resume") as its placeholder: the
// name is unmistakable, only its wrapping was slipped.
func mendUpload(a *Action) []string {
	name := strings.TrimSpace(a.Text)
	if name == "" || filePlaceholderRE.MatchString(name) || !filePlaceholderRE.MatchString(fileText(name)) {
		return nil
	}
	a.Text = fileText(name)
	return []string{"file " + name + " written as " + a.Text}
}

func writeUpload(a Action) string {
	return "upload [" + strconv.Itoa(a.Index) + "] " + a.Text
}

func scanUpload(rest string) (Action, string, error) {
	a := Action{Kind: ActUpload}
	var err error
	if a.Index, rest, err = scanIndex(rest); err != nil {
		return Action{}, "", err
	}
	m := filePlaceholderRE.FindString(strings.TrimPrefix(rest, " "))
	if !strings.HasPrefix(rest, " ") || m == "" {
		return Action{}, "", errors.New("want the file as <file:NAME>")
	}
	a.Text = m
	return a, rest[1+len(m):], nil
}

func checkTab(a Action) error {
	if n, err := strconv.Atoi(a.Text); err != nil || n < 1 || n > 99 {
		return fmt.Errorf("tab needs the tab's number as text, such as \"2\"; got %q", a.Text)
	}
	return nil
}
