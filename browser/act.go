package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/headroom-agent/headroom/internal/redact"
)

// act runs one action on a target and reports its outcome.
func (p *Page) act(ctx context.Context, op string, t Target, fn func(ctx context.Context, id cdp.BackendNodeID) (string, error)) (Outcome, error) {
	if t == nil {
		return Outcome{}, errNoTarget(op)
	}
	var detail string
	out, err := p.pageAction(ctx, op, t.String(), func(ctx context.Context, _ pageState) (*Outcome, error) {
		id, err := t.resolve(ctx, p)
		if err != nil {
			return nil, err
		}
		detail, err = fn(ctx, id)
		return nil, err
	})
	if detail != "" {
		out.Detail = p.hide(detail)
	}
	return out, err
}

// pageAction runs an action, waits for what it started and reports its
// outcome. fn sees the page's state before it; an Outcome it returns ends
// the action there, with nothing to wait for.
func (p *Page) pageAction(ctx context.Context, op, target string, fn func(ctx context.Context, before pageState) (*Outcome, error)) (Outcome, error) {
	var out Outcome
	asked, began, opened, on := p.dialogCount(), p.downloadCount(), p.followedCount(), p.tab()
	err := p.do(ctx, op, target, p.opts.ActionTimeout+p.opts.LoadTimeout, func(ctx context.Context) error {
		before, at := p.mark(ctx)
		done, err := fn(ctx, before)
		if done != nil {
			out = *done
		}
		if err != nil || done != nil {
			return err
		}
		out, err = p.settle(ctx, before, at)
		return err
	})
	out, err = p.afterTabs(ctx, on, opened, out, err)
	out.Dialogs = p.dialogsSince(asked)
	out.Downloads = p.downloadsSince(ctx, began, time.Now().Add(p.opts.ActionTimeout))
	p.afterStep(ctx, op, err)
	return out, err
}

// afterTabs moves the run to the tab an action opened, as a person's eyes
// follow a popup, or back to the opener of a tab that closed itself
// during it; either is the action's outcome, a navigation.
func (p *Page) afterTabs(ctx context.Context, on *tab, opened int, out Outcome, err error) (Outcome, error) {
	if p.closedNow(on) {
		// What the closing tab told its opener (a message, a storage
		// event) is handled there as the run comes back: let the opener
		// hold still before anything reads it.
		_ = p.do(ctx, "tab", "", settleLimit+time.Second, func(ctx context.Context) error {
			p.waitDOMQuiet(ctx, actionQuiet, time.Now().Add(settleLimit))
			return nil
		})
		return p.nowOn(ctx, "the tab closed itself; back on the tab that opened it")
	}
	if err != nil || !p.following() {
		return out, err
	}
	t := p.tabsSince(opened, p.opts.ActionTimeout)
	if t == nil || t.gone.Load() {
		return out, err
	}
	p.cur.Store(t)
	_ = p.do(ctx, "tab", "", p.opts.LoadTimeout+time.Second, func(ctx context.Context) error {
		p.waitLoad(ctx, p.opts.LoadTimeout) // a tab still loading is read as it stands
		return nil
	})
	return p.nowOn(ctx, "opened in a new tab")
}

// marks are the counts an action's outcome is read against: the tab's
// navigations, those refused for the allowed domains, and those the
// replay could not answer; and its traffic, navigations asked for and
// requests started, whose growth is what the action set going.
type marks struct {
	navs, blocked, missed int
	activity              activity
}

// mark notes the page's state before an action, and begins the epoch
// of timers the action's outcome waits for (timerWatchJS).
func (p *Page) mark(ctx context.Context) (pageState, marks) {
	return readState(ctx, markJS), marks{p.tab().net.navCount(), p.blockedDocCount(), p.missedDocCount(), p.tab().net.activity()}
}

// errNoTarget is an element action given no element, as an Action built
// without its Target would be.
func errNoTarget(op string) error {
	return fail(op, "", ErrNotFound, "no element named: give an index from a snapshot or a selector")
}

// named fills in the operation and target of an error made deep inside.
func named(err error, op, target string) error {
	var be *Error
	if errors.As(err, &be) {
		if be.Op == "" {
			be.Op = op
		}
		if be.Target == "" {
			be.Target = target
		}
	}
	return err
}

// describeJS names an element the way a person would point at it.
const describeJS = `function() {
  const e = this.nodeType === 1 ? this : this.parentElement;
  if (!e) return '#text';
  let s = e.tagName.toLowerCase();
  if (e.id) s += '#' + e.id;
  else if (typeof e.className === 'string' && e.className.trim()) s += '.' + e.className.trim().split(/\s+/).join('.');
  const t = (e.innerText || '').trim().replace(/\s+/g, ' ');
  if (t) s += ' "' + t.slice(0, 40) + '"';
  return s;
}`

// Click clicks the middle of the element, as a mouse would, after
// scrolling it into view. It fails with ErrDisabled for a disabled
// control and ErrCovered when another element would take the click.
func (p *Page) Click(ctx context.Context, t Target) (Outcome, error) {
	return p.act(ctx, "click", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		if err := checkEnabled(ctx, id); err != nil {
			return "", err
		}
		x, y, err := p.pointAt(ctx, id)
		if err != nil {
			return "", err
		}
		return "", chromedp.Do(ctx, chromedp.MouseClickXY(x, y))
	})
}

// Hover moves the mouse onto the middle of the element, after scrolling
// it into view, and leaves it there: what opens on hover (a menu, a
// tooltip) opens. It fails with ErrCovered when another element would
// get the mouse instead.
func (p *Page) Hover(ctx context.Context, t Target) (Outcome, error) {
	return p.act(ctx, "hover", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		x, y, err := p.pointAt(ctx, id)
		if err != nil {
			return "", err
		}
		return "", chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y))
	})
}

// checkEnabled fails for a disabled control or an aria-disabled element.
func checkEnabled(ctx context.Context, id cdp.BackendNodeID) error {
	disabled, err := callOn[bool](ctx, id, `function() {
  return !!(this.disabled || this.closest && this.closest('fieldset[disabled]') && this.matches('button,input,select,textarea')
    || this.getAttribute && this.getAttribute('aria-disabled') === 'true');
}`)
	if err != nil {
		return err
	}
	if disabled {
		return fail("", "", ErrDisabled, "it cannot be used until the page enables it")
	}
	return nil
}

// pointAt scrolls the element into view and returns the point a click
// would land on, after checking that nothing covers it.
func (p *Page) pointAt(ctx context.Context, id cdp.BackendNodeID) (float64, float64, error) {
	if _, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: id}); err != nil {
		return 0, 0, fail("", "", ErrNotInput, "it has no box to click (it is not rendered)")
	}
	q, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: id})
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return 0, 0, fail("", "", ErrNotInput, "it has no box to click (hidden or zero size)")
	}
	var x, y float64
	quad := q.Quads[0]
	for i := 0; i < 8; i += 2 {
		x += quad[i]
		y += quad[i+1]
	}
	x, y = x/4, y/4
	what, err := callOn[string](ctx, id, coverJS, x, y)
	if err != nil || what == "" {
		return x, y, nil // nothing on top, or nothing to tell: click
	}
	return 0, 0, fail("", "", ErrCovered, "%s is on top of it at (%.0f, %.0f)", what, x, y)
}

// coverJS names the element a click at (x, y), in the top viewport's
// coordinates, would reach instead of this one: "" when it reaches this
// one (or what is inside it, an icon in a button, or a label for it). It
// asks the element's own document, past the frames it is in and into
// open shadow roots, as the click itself will be. In a frame of another
// origin than its parent it cannot place the point (the frame's element is
// not its document's to read), so it tells nothing and the click goes on.
const coverJS = `function(x, y) {
  const doc = this.ownerDocument;
  for (let w = doc.defaultView; w && w !== w.top; w = w.parent) {
    const f = w.frameElement;
    if (!f) return '';
    const r = f.getBoundingClientRect();
    x -= r.left + f.clientLeft; y -= r.top + f.clientTop;
  }
  let h = doc.elementFromPoint(x, y);
  while (h && h.shadowRoot) {
    const inner = h.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === h) break;
    h = inner;
  }
  if (!h) return '';
  for (let n = h; n; n = n.parentNode || n.host) if (n === this) return '';
  const l = h.closest ? h.closest('label') : null;
  if (l && l.control === this) return '';
  return (` + describeJS + `).call(h);
}`

// Type puts text into a text field (replacing what it held), and presses
// Enter after it when submit is set.
//
// Each placeholder of a secret in text (Placeholder(name)) is typed as the
// secret's value, and only when every frame that holds the field, as the
// browser places it, is on the secret's domains (ErrSecretDomain
// otherwise, with nothing typed); a placeholder naming no secret is an
// error. Outcome.Secret is then set. A secret, or anything typed into a
// password field, is not typed as keys, which go wherever the page has put
// the focus, but set into the field itself as its value, with the input
// and change events typing makes. Other text is typed as keys into the
// focused field, and not at all when the page has moved the focus away
// (ErrFocusMoved); so is Enter.
func (p *Page) Type(ctx context.Context, t Target, text string, submit bool) (Outcome, error) {
	text, used, err := p.secretsIn(text)
	if err != nil {
		return Outcome{}, named(err, "type", targetName(t))
	}
	secret := len(used) > 0
	out, err := p.act(ctx, "type", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		if err := checkEnabled(ctx, id); err != nil {
			return "", err
		}
		kind, err := callOn[string](ctx, id, fieldKindJS)
		if err != nil {
			return "", err
		}
		if field, ok := strings.CutPrefix(kind, "secret:"); ok {
			secret, kind = true, "text"
			p.typedSecret(field, text)
		}
		switch kind {
		case "no":
			return "", fail("", "", ErrNotInput, "it is not a text field")
		case "readonly":
			return "", fail("", "", ErrDisabled, "the field is read-only")
		}
		if _, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: id}); err != nil {
			return "", err
		}
		if _, err := chromedp.Call(ctx, dom.Focus, dom.FocusParams{BackendNodeID: id}); err != nil {
			return "", err
		}
		frames, err := nodeFrames(ctx, id)
		if err != nil {
			return "", err
		}
		if !secret {
			return "", typeInto(ctx, frames, id, insertTextJS, text, submit,
				fail("", "", ErrFocusMoved, "the field did not take the text: the page moved the focus away, or changed what was typed"))
		}
		if err := p.checkSecretHosts(frames, used); err != nil {
			return "", err
		}
		return "", typeInto(ctx, frames, id, setValueJS, text, submit, fail("", "", ErrNotInput, "the field did not keep what was typed into it"))
	})
	out.Secret = secret
	return out, err
}

// fieldKindJS says what typing into the element means: text, a secret
// (a password field, with its name), read-only, or no field at all.
const fieldKindJS = `function() {
  if (this.isContentEditable) return 'editable';
  if (this.tagName === 'TEXTAREA') return this.readOnly ? 'readonly' : 'text';
  if (this.tagName !== 'INPUT') return 'no';
  const t = (this.type || 'text').toLowerCase();
  if (['button','submit','reset','image','checkbox','radio','file','color','range','hidden'].includes(t)) return 'no';
  if (this.readOnly) return 'readonly';
  return t === 'password' ? 'secret:' + (this.name || '') : 'text';
}`

// typeInto puts text into the field id with put (setValueJS for a
// secret, insertTextJS otherwise), run in an isolated world of the
// field's own frame; fails with untaken unless the field then holds the
// text; and presses Enter when submit is set and keys sent now would
// reach the field.
func typeInto(ctx context.Context, frames []*cdp.Frame, id cdp.BackendNodeID, put, text string, submit bool, untaken error) error {
	took, err := callIsolated[bool](ctx, frames[len(frames)-1].ID, id, put, text)
	if err != nil {
		return err
	}
	if !took {
		return untaken
	}
	if !submit {
		return nil
	}
	ok, err := focused(ctx, frames, id)
	if err != nil {
		return err
	}
	if !ok {
		return fail("", "", ErrFocusMoved, "the page moved the focus away from the field: its text is in it, and Enter was not pressed")
	}
	return chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter))
}

// typedSecret keeps what is typed into a password field secret wherever
// it goes next, before it can go anywhere: in every output (redact.Secret),
// and in the HAR being recorded or the requests a replay matches, by the
// field's name and by the value itself, whatever the name.
func (p *Page) typedSecret(field, value string) {
	redact.Secret(value)
	if p.opts.Record != nil {
		p.opts.Record.Secret(field, value)
	}
	if p.opts.Replay != nil {
		p.opts.Replay.Secret(value)
	}
}

type selectResult struct {
	Err     string   `json:"err"`
	Options []string `json:"options"`
	Label   string   `json:"label"`
	Same    bool     `json:"same"`
}

// Select chooses an option of a <select> by its value or label (exact,
// then ignoring case and spacing, then by substring).
func (p *Page) Select(ctx context.Context, t Target, option string) (Outcome, error) {
	return p.act(ctx, "select", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		if err := checkEnabled(ctx, id); err != nil {
			return "", err
		}
		r, err := callOn[selectResult](ctx, id, `function(want) {
  if (this.tagName !== 'SELECT') return {err: 'notselect'};
  const opts = [...this.options];
  const norm = (s) => s.trim().replace(/\s+/g, ' ').toLowerCase();
  const o = opts.find(o => o.value === want) || opts.find(o => o.label.trim() === want) ||
    opts.find(o => norm(o.label) === norm(want)) || opts.find(o => norm(want) !== '' && norm(o.label).includes(norm(want)));
  if (!o) return {err: 'nooption', options: opts.map(o => o.label.trim())};
  if (o.disabled) return {err: 'disabled', label: o.label.trim()};
  if (this.value === o.value && o.selected) return {same: true, label: o.label.trim()};
  o.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {label: o.label.trim()};
}`, option)
		if err != nil {
			return "", err
		}
		switch r.Err {
		case "notselect":
			return "", fail("", "", ErrNotInput, "it is not a <select>: click it and pick the option instead")
		case "nooption":
			return "", fail("", "", ErrNoOption, "%q is not one of %s", option, quoteList(r.Options))
		case "disabled":
			return "", fail("", "", ErrDisabled, "option %q is disabled", r.Label)
		}
		return fmt.Sprintf("selected %q", r.Label), nil
	})
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Scroll scrolls the page by most of a screen, "up" or "down".
func (p *Page) Scroll(ctx context.Context, direction string) (Outcome, error) {
	sign := 0
	switch strings.ToLower(direction) {
	case "down":
		sign = 1
	case "up":
		sign = -1
	default:
		return Outcome{}, fail("scroll", direction, ErrNotFound, "want up or down, or scroll to an element")
	}
	return p.pageAction(ctx, "scroll", direction, func(ctx context.Context, _ pageState) (*Outcome, error) {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("window.scrollBy(0, %d * Math.round(innerHeight * 0.8)), true", sign)))
		return nil, err
	})
}

// ScrollTo scrolls until the element is in view.
func (p *Page) ScrollTo(ctx context.Context, t Target) (Outcome, error) {
	return p.act(ctx, "scroll", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		_, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: id})
		if err != nil {
			return "", fail("", "", ErrNotInput, "it is not rendered, so it cannot be scrolled to")
		}
		return "", nil
	})
}

// Navigate loads a URL (relative ones against the current page) and waits
// for it and the requests it makes to finish.
func (p *Page) Navigate(ctx context.Context, rawURL string) (Outcome, error) {
	return p.pageAction(ctx, "navigate", safeURL(rawURL), func(ctx context.Context, before pageState) (*Outcome, error) {
		target := rawURL
		if base, err := url.Parse(before.URL); err == nil && before.URL != "" {
			if u, err := base.Parse(rawURL); err == nil {
				target = u.String()
			}
		}
		if err := p.checkScheme(target); err != nil {
			return nil, err
		}
		if !p.allow.url(target) {
			p.mu.Lock()
			p.blocked = append(p.blocked, safeURL(target))
			p.mu.Unlock()
			return nil, fail("", "", ErrBlocked, "allowed: %s", strings.Join(p.opts.AllowedDomains, ", "))
		}
		lctx, cancel := context.WithTimeout(ctx, p.opts.LoadTimeout)
		defer cancel()
		docs, missed := p.blockedDocCount(), p.missedDocCount()
		if err := chromedp.Do(lctx, chromedp.Navigate(target)); err != nil {
			if lctx.Err() != nil {
				// Stop the load, or the tab keeps waiting for it.
				_ = chromedp.Do(ctx, chromedp.Stop())
			}
			if u := p.blockedDocsSince(docs); len(u) > 0 { // redirected off the allowed domains
				return nil, fail("", "", ErrBlocked, "it redirected to %s", u[0])
			}
			if err := p.missedDocSince(missed); err != nil { // not in the replay, or redirected out of it
				return nil, err
			}
			return nil, loadError(err, lctx, p.opts.LoadTimeout)
		}
		if why := p.tab().net.unreachableDoc(); why != "" {
			// Through the fence, a host that did not answer is the fence's
			// page, not a browser's error: the same failure all the same.
			return nil, &Error{Kind: ErrLoad, Detail: why}
		}
		return nil, nil
	})
}

func loadError(err error, lctx context.Context, limit time.Duration) error {
	var le *chromedp.LoadError
	switch {
	case errors.As(err, &le) && strings.Contains(le.ErrorText, "BLOCKED_BY_CLIENT"):
		return fail("", "", ErrBlocked, "%s", le.ErrorText)
	case errors.As(err, &le):
		return &Error{Kind: ErrLoad, Detail: le.ErrorText}
	case lctx.Err() != nil:
		return &Error{Kind: ErrLoad, Detail: fmt.Sprintf("it did not finish loading within %s", limit)}
	}
	return err
}

// Back goes back one page in the tab's history; Nothing when there is
// no page to go back to.
func (p *Page) Back(ctx context.Context) (Outcome, error) {
	return p.pageAction(ctx, "back", "", func(ctx context.Context, before pageState) (*Outcome, error) {
		h, err := chromedp.Run(ctx, chromedp.NavigationEntries())
		if err != nil {
			return nil, err
		}
		if h.CurrentIndex <= 0 {
			return &Outcome{Effect: Nothing, URL: p.shownURL(before.URL), Detail: "no page to go back to"}, nil
		}
		if err := chromedp.Do(ctx, chromedp.NavigateToHistoryEntry(h.Entries[h.CurrentIndex-1].ID)); err != nil {
			return nil, loadError(err, ctx, p.opts.LoadTimeout)
		}
		return nil, nil
	})
}

// Press presses a key or a chord on whatever has focus: a name such as
// Enter, Tab, Escape or ArrowDown, a single character, either after
// modifiers joined by "+" (Ctrl+A, Shift+Tab, Alt+ArrowDown); see
// ParseKey.
func (p *Page) Press(ctx context.Context, key string) (Outcome, error) {
	k, mods, err := ParseKey(key)
	if err != nil {
		return Outcome{}, fail("press", key, ErrNotFound, "%v", err)
	}
	return p.pageAction(ctx, "press", key, func(ctx context.Context, _ pageState) (*Outcome, error) {
		return nil, chromedp.Do(ctx, chromedp.KeyEvent(k, chromedp.KeyModifiers(mods)))
	})
}

// Extract returns the element's rendered text (a field's value for
// fields).
func (p *Page) Extract(ctx context.Context, t Target) (string, error) {
	if t == nil {
		return "", errNoTarget("extract")
	}
	var text string
	err := p.do(ctx, "extract", t.String(), p.opts.ActionTimeout, func(ctx context.Context) error {
		id, err := t.resolve(ctx, p)
		if err != nil {
			return err
		}
		text, err = callOn[string](ctx, id, `function() {
  if (this.tagName === 'INPUT' || this.tagName === 'TEXTAREA') return this.type === 'password' ? '' : this.value;
  if (this.tagName === 'SELECT') return this.selectedOptions.length ? this.selectedOptions[0].label : '';
  return (this.innerText || this.textContent || '').trim();
}`)
		return err
	})
	return p.hide(text), named(err, "extract", t.String())
}

// ExtractPage returns the whole page's rendered text, its frames' after
// it (of any origin it was allowed), each secret's value shown as its
// placeholder.
func (p *Page) ExtractPage(ctx context.Context) (string, error) {
	var text string
	err := p.do(ctx, "extract", "page", p.opts.ActionTimeout, func(ctx context.Context) error {
		var err error
		if text, err = chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''")); err != nil {
			return err
		}
		if more := framesText(ctx); more != "" {
			text += "\n" + more
		}
		if p.showsPDF() {
			loc, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				return err
			}
			text += "\n" + p.pdfOnTab(ctx, loc)
		}
		return nil
	})
	return strings.TrimSpace(p.hide(text)), err
}
