package browser

import (
	"errors"
	"fmt"
)

// The kinds of browser failure. An *Error wraps exactly one; test with
// errors.Is(err, browser.ErrCovered) and so on.
var (
	ErrLaunch    = errors.New("chrome did not start")
	ErrCrashed   = errors.New("chrome crashed or went away")
	ErrClosed    = errors.New("the page is closed")
	ErrLoad      = errors.New("the page did not load")
	ErrBlocked   = errors.New("outside the run's allowed domains")
	ErrIndexGone = errors.New("no element with that index any more")
	ErrNotFound  = errors.New("no element matches")
	ErrCovered   = errors.New("another element covers it")
	ErrDisabled  = errors.New("the element is disabled")
	ErrNoOption  = errors.New("no such option")
	ErrNotInput  = errors.New("the element does not take that action")
	ErrTimeout   = errors.New("timed out")
	ErrRefused   = errors.New("the browser refused the command")
	// ErrNotRecorded is a replayed page going where its archive has no
	// answer: a navigation (typed, clicked, submitted or redirected) to a
	// document it did not record. The work ran and went somewhere the
	// recording never did; the browser is fine.
	ErrNotRecorded = errors.New("not recorded")
	// ErrSecretDomain is a secret used where it may not be: a type action
	// whose text holds a secret's placeholder, into a field in a frame
	// off the secret's domains (nothing is typed), or an action on an
	// element that shows a secret's value off its domains.
	ErrSecretDomain = errors.New("a secret outside its domains")
	// ErrFocusMoved is keys meant for an element while the page had moved
	// the keyboard's focus elsewhere: none were sent.
	ErrFocusMoved = errors.New("the focus left the element")
	// ErrNoAction is an Action the page cannot take as written: an
	// unknown kind, an empty one (no kind, no function, nothing to
	// expect), a screenshot with no file.
	// Nothing reached the browser.
	ErrNoAction = errors.New("not an action the page can take")
)

// Error is a failed browser operation: what was tried (Op, on Target), the
// kind of failure, and what the browser said.
type Error struct {
	Op     string // click, type, navigate, launch, ...
	Target string // [3], css "#go", a URL; empty when none
	Kind   error  // one of the Err* values above
	Detail string // what happened, for a person
	Err    error  // the underlying error, if any
}

func (e *Error) Error() string {
	s := "browser: " + e.Op
	if e.Target != "" {
		s += " " + e.Target
	}
	s += ": " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

// Unwrap lets errors.Is find both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func fail(op, target string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Target: target, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

var errNoDocument = errors.New("the tab has no document")
