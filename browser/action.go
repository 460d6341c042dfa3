package browser

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
)

// Kind is what an Action does.
type Kind string

// The kinds of action. The zero Kind does nothing but the Expect check.
const (
	KindClick      Kind = "click"
	KindType       Kind = "type"
	KindSelect     Kind = "select"
	KindNavigate   Kind = "navigate"
	KindScroll     Kind = "scroll" // by a screen, or to the Target when set
	KindPress      Kind = "press"
	KindHover      Kind = "hover"
	KindUpload     Kind = "upload"
	KindBack       Kind = "back"
	KindWait       Kind = "wait"
	KindScreenshot Kind = "screenshot"
	KindTab        Kind = "tab"       // switch to the open tab numbered Tab
	KindCloseTab   Kind = "close-tab" // close the current tab, back to its opener
)

// Action is one thing a person does on a page, as a value: a scripted
// step and a model's choice become the same Action, and Page.Do takes
// either. Build one with Click, TypeInto, SelectOption and the other
// constructors; the fields a kind does not use stay empty.
type Action struct {
	Kind      Kind
	Target    Target        // the element to click, type into, select in, scroll to or hover over
	Text      string        // what to type, the option (value or label) to select, or the file to upload, by name
	Submit    bool          // press Enter after typing
	URL       string        // where to navigate, relative to the page or absolute
	Key       string        // the key or chord to press: Enter, Tab, ArrowDown, Ctrl+A, a single character, ...
	Direction string        // up or down, to scroll by a screen
	Until     WaitFor       // the condition to wait for; when empty, a wait pauses for Delay
	Delay     time.Duration // how long a wait pauses
	File      string        // where a screenshot's PNG goes
	Tab       int           // the tab to switch to, from 1
	// Func, when set, is what the action does: an action of the
	// caller's own (Perform), whatever its Kind.
	Func Func
	// Expect is text the page must show after the action: the action
	// fails with ErrNotFound when it does not.
	Expect string
}

// Func is an action written as a function, as chromedp's actions are: it
// runs in the page's tab (ctx carries it, so chromedp.Run(ctx, ...) acts
// there, inside the run's fence) on the node its Target names, 0 when it
// has none, and returns a detail for the outcome (what it did, in a few
// words). Page.Do waits for what it started and reports the outcome as it
// does for the built-ins.
type Func func(ctx context.Context, node cdp.BackendNodeID) (detail string, err error)

// Perform is an action of the caller's own, called name in reports, done
// by fn on the element t names (nil for none).
func Perform(name string, t Target, fn Func) Action {
	return Action{Kind: Kind(name), Target: t, Func: fn}
}

// Click clicks an element.
func Click(t Target) Action { return Action{Kind: KindClick, Target: t} }

// TypeInto replaces what a text field holds with text, and presses Enter
// after it when submit is set.
func TypeInto(t Target, text string, submit bool) Action {
	return Action{Kind: KindType, Target: t, Text: text, Submit: submit}
}

// SelectOption chooses an option of a <select> by its value or label.
func SelectOption(t Target, option string) Action {
	return Action{Kind: KindSelect, Target: t, Text: option}
}

// Navigate loads a URL.
func Navigate(url string) Action { return Action{Kind: KindNavigate, URL: url} }

// ScrollBy scrolls the page by most of a screen, "up" or "down".
func ScrollBy(direction string) Action { return Action{Kind: KindScroll, Direction: direction} }

// ScrollTo scrolls until an element is in view.
func ScrollTo(t Target) Action { return Action{Kind: KindScroll, Target: t} }

// Press presses a key or a chord (Ctrl+A) on whatever has focus.
func Press(key string) Action { return Action{Kind: KindPress, Key: key} }

// Upload gives a file input the file declared as name (Options.Files).
func Upload(t Target, name string) Action { return Action{Kind: KindUpload, Target: t, Text: name} }

// Hover rests the mouse on an element, as a person does to open a menu
// or show a tooltip.
func Hover(t Target) Action { return Action{Kind: KindHover, Target: t} }

// Back goes back one page in the tab's history.
func Back() Action { return Action{Kind: KindBack} }

// Wait waits for the page to reach a condition, within the action timeout.
func Wait(until WaitFor) Action { return Action{Kind: KindWait, Until: until} }

// Pause waits for a fixed time, for pages that give nothing to wait on.
func Pause(d time.Duration) Action { return Action{Kind: KindWait, Delay: d} }

// SwitchTab makes the open tab numbered n (from 1, as Page.Tabs numbers
// them) the current one.
func SwitchTab(n int) Action { return Action{Kind: KindTab, Tab: n} }

// CloseTab closes the current tab, a tab the page opened, and goes back to
// the one that opened it.
func CloseTab() Action { return Action{Kind: KindCloseTab} }

// SaveScreenshot writes a PNG of the viewport to file.
func SaveScreenshot(file string) Action { return Action{Kind: KindScreenshot, File: file} }

// Expect checks that the page shows text, and does nothing else.
func Expect(text string) Action { return Action{Expect: text} }

// Expecting is the action followed by a check that the page shows text.
func (a Action) Expecting(text string) Action {
	a.Expect = text
	return a
}

// String is the action as a person would say it: `type "oak" into [3] and
// submit`, `click css "#go", then expect "Thanks"`.
func (a Action) String() string { return a.say(Target.String) }

// say words the action, naming targets with name.
func (a Action) say(name func(Target) string) string {
	target := func() string {
		if a.Target == nil {
			return "nothing"
		}
		return name(a.Target)
	}
	var s string
	switch a.Kind {
	case "":
	case KindClick:
		s = "click " + target()
	case KindType:
		s = fmt.Sprintf("type %q into %s", a.Text, target())
		if a.Submit {
			s += " and submit"
		}
	case KindSelect:
		s = fmt.Sprintf("select %q in %s", a.Text, target())
	case KindNavigate:
		s = "navigate to " + safeURL(a.URL)
	case KindScroll:
		if a.Target != nil {
			s = "scroll to " + target()
		} else {
			s = "scroll " + a.Direction
		}
	case KindPress:
		s = "press " + a.Key
	case KindHover:
		s = "hover over " + target()
	case KindUpload:
		s = "upload " + FilePlaceholder(FileName(a.Text)) + " into " + target()
	case KindBack:
		s = "go back"
	case KindWait:
		if a.Until != "" {
			s = "wait for " + string(a.Until)
		} else {
			s = "wait for " + a.Delay.String()
		}
	case KindScreenshot:
		s = "screenshot " + a.File
	case KindTab:
		s = fmt.Sprintf("switch to tab %d", a.Tab)
	case KindCloseTab:
		s = "close the tab"
	default:
		s = string(a.Kind)
		if a.Target != nil {
			s += " " + target()
		}
	}
	if a.Expect != "" {
		if s != "" {
			s += ", then "
		}
		s += fmt.Sprintf("expect %q", a.Expect)
	}
	return s
}
