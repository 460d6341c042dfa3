package browser

import (
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/redact"
)

// DialogPolicy is how the page's dialogs (alert, confirm, prompt,
// beforeunload) are answered. Each is answered the moment it opens: a
// dialog left open stops the page's scripts, its loading and every call
// into it, and a run would wait on it until its deadline.
type DialogPolicy string

const (
	// AcceptDialogs presses OK: a confirm is confirmed, a prompt gets its
	// default text, a page asking to be left is left. The zero value.
	AcceptDialogs DialogPolicy = "accept"
	// DismissDialogs presses Cancel: a confirm is declined, a prompt
	// answers null, a page asking to be left is stayed on. An alert has
	// only OK, so it is closed either way.
	DismissDialogs DialogPolicy = "dismiss"
)

// CheckDialogPolicy refuses a policy other than accept, dismiss or "".
func CheckDialogPolicy(d DialogPolicy) error {
	switch d {
	case "", AcceptDialogs, DismissDialogs:
		return nil
	}
	return fmt.Errorf("%s is not a way to answer dialogs: write %q (the default) or %q", strconv.Quote(string(d)), AcceptDialogs, DismissDialogs)
}

// Dialog is one dialog the page opened, and how it was answered.
type Dialog struct {
	Kind    string `json:"kind"`              // alert, confirm, prompt or beforeunload
	Message string `json:"message,omitempty"` // what it said, its secrets redacted
	// Accepted is set when OK was pressed (always, for an alert).
	Accepted bool `json:"accepted"`
	// Answer is what a prompt accepted was given: its default text.
	Answer string `json:"answer,omitempty"`
}

// String says what happened as a note in the page's view or a step's
// record: `the page asked "Delete order 7?" and it was accepted`.
func (d Dialog) String() string {
	said := strconv.Quote(clipDialog(d.Message))
	switch d.Kind {
	case string(page.DialogTypeAlert):
		return "the page showed the alert " + said + " and it was closed"
	case string(page.DialogTypeBeforeunload):
		if d.Accepted {
			return "the page asked whether to leave it and it was left"
		}
		return "the page asked whether to leave it and the run stayed"
	case string(page.DialogTypePrompt):
		if d.Accepted {
			return "the page asked " + said + " and it was answered " + strconv.Quote(clipDialog(d.Answer))
		}
	}
	if d.Accepted {
		return "the page asked " + said + " and it was accepted"
	}
	return "the page asked " + said + " and it was dismissed"
}

// maxDialogsKept bounds the dialogs a Page notes: a page that opens
// them in a loop has each answered, and the rest past this not kept.
const maxDialogsKept = 1000

// maxDialogRunes bounds what a dialog's note quotes: a page could fill a
// dialog with a novel meant for the model.
const maxDialogRunes = 200

func clipDialog(s string) string {
	r := []rune(s)
	if len(r) <= maxDialogRunes {
		return s
	}
	return string(r[:maxDialogRunes]) + "…"
}

// answerDialog answers a dialog as the policy says and notes it. It runs
// off the tab's event loop, where the answer's reply arrives.
func (p *Page) answerDialog(t *tab, e *page.EventJavascriptDialogOpening) {
	accept := p.opts.Dialogs != DismissDialogs || e.Type == page.DialogTypeAlert
	d := Dialog{Kind: string(e.Type), Accepted: accept}
	d.Message = redact.Text(p.hideOn(hostOf(e.URL), e.Message))
	answer := page.HandleJavaScriptDialogParams{Accept: accept}
	if accept && e.Type == page.DialogTypePrompt {
		answer.PromptText = e.DefaultPrompt
		d.Answer = redact.Text(p.hideOn(hostOf(e.URL), e.DefaultPrompt))
	}
	p.mu.Lock()
	if len(p.dialogs) < maxDialogsKept {
		p.dialogs = append(p.dialogs, d)
	}
	p.mu.Unlock()
	if _, err := chromedp.Call(t.ctx, page.HandleJavaScriptDialog, answer); err != nil {
		p.opts.Logf("answering the page's %s: %v", e.Type, err)
		return
	}
	p.opts.Logf("%s", d)
}

// dialogCount is how many dialogs the page has opened, for an action to
// tell those it opened.
func (p *Page) dialogCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.dialogs)
}

// dialogsSince returns the dialogs opened since the first n.
func (p *Page) dialogsSince(n int) []Dialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dialogsFrom(n)
}

// newDialogs returns the dialogs opened since the last snapshot, for the
// next: an action's outcome tells of those it opened, and the page's
// view tells of them again, with those it opened as it loaded or on a
// timer, which no action's outcome does.
func (p *Page) newDialogs() []Dialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.dialogsShown
	p.dialogsShown = len(p.dialogs)
	return p.dialogsFrom(n)
}

// dialogsFrom copies the dialogs from the n-th on; p.mu is held.
func (p *Page) dialogsFrom(n int) []Dialog {
	if n >= len(p.dialogs) {
		return nil
	}
	return append([]Dialog(nil), p.dialogs[n:]...)
}
