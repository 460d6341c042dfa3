// Package browser drives Chrome for an agent: it launches or attaches to a
// browser, observes a page as a compact indexed snapshot, acts on it by
// index or by selector, takes screenshots, keeps a run on its allowed
// domains, and records or replays the page's traffic as HAR.
//
// A Page is one tab of one run. An Action is one step a person takes,
// built to read like one: Click(snap.Index(3)), TypeInto(CSS("#q"),
// "shoes", true), Navigate("/cart"). Page.Do takes it, whether a script
// or a model chose it, and says what it did (Outcome) or why it could not
// (*Error, with a kind such as ErrCovered). An index belongs to the
// snapshot it was read from, so observing again never moves it.
package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/redact"
)

// Options configure a Page. The zero value launches a local headless
// Chromium with a fresh profile, allows every domain, and talks to the
// network.
type Options struct {
	// ChromePath is the browser to launch; empty means $CHROME_PATH, then
	// the usual names (chromium, google-chrome, ...) on $PATH.
	ChromePath string
	// Remote attaches to a running browser instead of launching one:
	// ws://host:port/devtools/browser/... or http://host:port. The run
	// gets a browser context of its own, closed with the Page.
	Remote string
	// Width and Height of the viewport; 1280×800 when zero.
	Width, Height int
	// AllowedDomains, when set, confine the run: requests to any other
	// host fail in the browser, whichever tab, frame or worker makes
	// them. "example.com" also allows its subdomains; an IP address
	// allows only itself. A launched browser (or an attached one on this
	// machine) sends everything through a proxy of this Page that
	// enforces the list; a browser attached elsewhere is confined in its
	// tab only, and new tabs are closed.
	AllowedDomains []string
	// AllowSchemes are URL schemes beside http and https that Navigate
	// may load, such as "file"; none by default.
	AllowSchemes []string
	// Secrets are values a type action may type by placeholder
	// (Placeholder(name)), on their domains only; the page shows each
	// value as its placeholder and every output redacts it.
	Secrets []Secret
	// Files are the files an upload may give the page, by name; nothing
	// else on disk can be reached, and only on the allowed domains.
	Files []File
	// StorageState, when set, is loaded before the first navigation:
	// its cookies and localStorage, only what lies within AllowedDomains
	// (StorageDropped counts the rest).
	StorageState *StorageState
	// Record, when set, receives every exchange the page makes; it does
	// not go with Replay.
	Record *replay.Recorder
	// Replay, when set, answers every request from an archive; nothing
	// reaches the network, and what it cannot answer fails (a miss).
	Replay *replay.Matcher
	// Clock is the time the page's Date starts from in a deterministic
	// run; record and replay set it from the recording.
	Clock time.Time
	// Deterministic fixes Date, Math.random, crypto.getRandomValues, the
	// time zone and the locale, and turns off the cache and service
	// workers. On whenever Record or Replay is set.
	Deterministic bool
	// ActionTimeout bounds each action and wait; 15 s when zero.
	ActionTimeout time.Duration
	// LoadTimeout bounds a navigation; 30 s when zero.
	LoadTimeout time.Duration
	// LaunchTimeout bounds starting or attaching to the browser; 30 s
	// when zero. It is apart from LoadTimeout because a busy machine can
	// take seconds to start Chrome even when its pages load at once.
	LaunchTimeout time.Duration
	// Dialogs is how the page's alerts, confirms, prompts and
	// beforeunload questions are answered, each as it opens; accepted
	// when empty. What each said is in the outcome of the action that
	// opened it, or else in the next snapshot.
	Dialogs DialogPolicy
	// Tabs is how many tabs the run may have open at once (at most 16).
	// Above one, a tab the page opens (a popup, a target=_blank link) is
	// followed: fenced and wired as the first tab is, and made the
	// current one when an action opened it; one beyond the count is
	// closed. 0 or 1: new tabs are closed as they open. A browser attached
	// on another machine has one tab: its new tabs cannot be fenced.
	Tabs int
	// DownloadDir is where the page's downloads are saved, each under
	// its own name, at most MaxDownloadBytes each (DefaultMaxDownloadBytes
	// when zero); when empty, a folder of the Page's own that Close
	// removes. A browser attached on another machine downloads nothing.
	// Each download is told of in its action's outcome.
	DownloadDir      string
	MaxDownloadBytes int64
	// Snapshot sizes observations.
	Snapshot SnapshotOptions
	// ScreenshotDir, when set, gets a PNG after every action.
	ScreenshotDir string
	// Logf receives what a person may want to know (blocked requests,
	// closed tabs); nil discards it.
	Logf func(format string, args ...any)
	// Warnf receives what a person must be told of a replay, whether or
	// not Logf is shown: each request the archive could not answer (a
	// miss: what was asked, that the archive, by name, does not hold it,
	// and what it holds nearest) and each one the fuzzy fallback answered
	// (what was asked, and the recorded request that answered it). Each
	// distinct one is reported once a Page; the Matcher's Stats count them
	// all. Nil sends them to Logf. Like Logf, it may be called from
	// several goroutines at once.
	Warnf func(format string, args ...any)
	// ChromeOutput receives Chrome's own stderr; nil discards it.
	ChromeOutput io.Writer
	// Flags are extra command-line flags for a launched Chrome, such as
	// "proxy-server": "http://proxy:3128" (true for a bare flag).
	Flags map[string]any
	// ReapHelpers makes this process the subreaper of a launched Chrome's
	// helper processes (Linux), so Close reaps them instead of leaving
	// them to init. It is process-wide, and Close then ends and reaps
	// every process below this one that was not there before the
	// browser started: set it in a program that owns its container and
	// runs one browser, such as headroom run, not in a library's host,
	// where another part's child started meanwhile would go too.
	ReapHelpers bool
}

func (o *Options) defaults() {
	if o.Width <= 0 {
		o.Width = 1280
	}
	if o.Height <= 0 {
		o.Height = 800
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 15 * time.Second
	}
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = 30 * time.Second
	}
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 30 * time.Second
	}
	if o.Record != nil || o.Replay != nil {
		o.Deterministic = true
	}
	if o.Deterministic && o.Clock.IsZero() {
		switch {
		case o.Record != nil:
			o.Clock = o.Record.Recorded()
		case o.Replay != nil:
			o.Clock = o.Replay.Recorded()
		}
		if o.Clock.IsZero() {
			o.Clock = time.Now()
		}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Warnf == nil {
		o.Warnf = o.Logf
	}
}

// Page is one browser tab for one run. Its methods may be called from one
// goroutine at a time; Close may be called from any.
type Page struct {
	opts Options

	first         *tab               // the run's tab, opened with the Page; lives until Close
	cancelBrowser context.CancelFunc // the launched browser's first tab, when the run's tab has a context of its own
	cancelAlloc   context.CancelFunc
	pid           int            // launched Chrome's pid; 0 when attached
	older         []int          // with ReapHelpers, the processes below this one before Chrome started
	profile       string         // launched Chrome's profile directory, removed by Close
	downloadTmp   string         // the downloads folder the Page made, removed by Close
	keeping       sync.WaitGroup // whole downloads being named and read, for Close to wait on; added to under mu until kept is set

	crashed atomic.Bool
	dead    chan struct{} // closed when the renderer crashes
	dying   sync.Once
	closed  atomic.Bool
	pending sync.Map // fetch.RequestID → pending, while recording
	seq     atomic.Int64

	allow    allowlist // what the tab may load
	confined bool      // allowed domains or a replay: every target is fenced
	fence    *fence    // the tab's browser context's proxy; nil when not confined, or the browser is elsewhere
	sink     *fence    // the launched browser's own proxy, refusing its calls home uncounted

	cur     atomic.Pointer[tab] // the tab actions and observations go to
	opening sync.WaitGroup      // new tabs being wired, for an action to wait on

	mu           sync.Mutex
	blocked      []string    // URLs refused for being off the allowed domains
	blockedDocs  []string    // of those, the documents: navigations refused
	closedTabs   []string    // new tabs the page opened, closed
	tabs         []*tab      // the open tabs, first the run's, in the order they opened
	newTabs      int         // tabs followed so far, for an action to tell those it opened
	steps        int         // actions taken, for screenshot names
	missedDocs   []*Error    // of those, the tab's navigations, as the error each is
	dialogs      []Dialog    // the dialogs the page opened, each answered
	dialogsShown int         // of those, how many a snapshot has shown
	downloads    []*Download // the downloads the page began
	kept         bool        // Close is waiting on keeping: no more downloads are kept
	warned       map[string]bool

	host           string       // the tab's document's host when last seen (lastHost)
	secretsShown   shownSecrets // how the page's words show the secrets, by host
	storageDropped int          // what Options.StorageState held outside the allowed domains
	origins        []string     // the origins the tab's documents were on, for StorageState
}

// Open starts (or attaches to) a browser and opens one tab in it, in four
// steps: fence the targets, launch or attach, open the tab, wire it.
func Open(ctx context.Context, o Options) (*Page, error) {
	o.defaults()
	if err := o.check(); err != nil {
		return nil, err
	}
	// In the tab, a replay answers what the allowed domains admit from
	// its archive; beside the tab it reaches nothing, so its fence
	// refuses every host.
	p := &Page{opts: o, dead: make(chan struct{}), allow: newAllowlist(o.AllowedDomains, false)}
	p.confined = len(o.AllowedDomains) > 0 || o.Replay != nil
	p.learnSecrets()
	if err := p.open(ctx); err != nil {
		if cerr := p.Close(); cerr != nil {
			o.Logf("closing what the failed start left: %v", cerr)
		}
		return nil, err
	}
	return p, nil
}

// check refuses options that cannot go together, before anything starts.
func (o *Options) check() error {
	for _, d := range o.AllowedDomains {
		if err := CheckDomain(d); err != nil {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: "allowed domains", Err: err}
		}
	}
	if o.Tabs < 0 || o.Tabs > maxTabsLimit {
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("tabs %d: want 0 to %d", o.Tabs, maxTabsLimit)}
	}
	if err := CheckDialogPolicy(o.Dialogs); err != nil {
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: "dialogs", Err: err}
	}
	if err := o.checkSecrets(); err != nil {
		return err
	}
	if err := o.checkFiles(); err != nil {
		return err
	}
	if o.Record != nil && o.Replay != nil {
		// A replay feeds no recorder: the HAR written would be empty.
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: "Record and Replay together: a replayed page's exchanges are its archive's already; record a live page"}
	}
	if _, ok := o.Flags["proxy-server"]; ok && (len(o.AllowedDomains) > 0 || o.Replay != nil) {
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: "the proxy-server flag cannot be combined with allowed domains or a replay: the run's own proxy enforces them"}
	}
	return nil
}

// open takes Open's steps. What it started before a step failed is left
// for Close.
func (p *Page) open(ctx context.Context) error {
	if err := p.fenceTargets(); err != nil {
		return err
	}
	alloc, what, err := p.launchOrAttach()
	if err != nil {
		return err
	}
	if err := p.openTab(ctx, alloc, what); err != nil {
		return err
	}
	if err := p.wire(); err != nil {
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: "setting up the tab", Err: err}
	}
	return nil
}

// fenceTargets starts the proxies a confined run's targets go through: the
// fence of the tab's browser context, and for a launched browser a sink
// for its own calls home. A browser attached elsewhere cannot reach a
// proxy here: its run is confined in the tab only.
func (p *Page) fenceTargets() error {
	o := p.opts
	if !p.confined {
		return nil
	}
	if o.Remote != "" && !remoteIsLocal(o.Remote) {
		o.Logf("the browser at %s is not on this machine: requests are confined in the run's tab, and new tabs are closed", redactURL(o.Remote))
		return nil
	}
	fa := p.allow
	if o.Replay != nil {
		fa = newAllowlist(nil, true)
	}
	var err error
	if p.fence, err = startFence(fa, p.refusedByFence); err != nil {
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: "starting the run's proxy", Err: err}
	}
	if o.Replay != nil {
		p.fence.answer = p.replayBeside
	}
	if o.Remote == "" {
		// The browser's own calls home (updates, sign-in) are no page's
		// doing: they meet a proxy of their own that refuses them all and
		// counts none.
		if p.sink, err = startFence(newAllowlist(nil, true), nil); err != nil {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: "starting the run's proxy", Err: err}
		}
	}
	return nil
}

// launchOrAttach makes the allocator of the run's browser: one that
// attaches to Options.Remote, or one that launches Chrome on a profile of
// the Page's own. Nothing starts until the tab's first action. what says
// which, for errors.
func (p *Page) launchOrAttach() (alloc context.Context, what string, err error) {
	o := p.opts
	if o.Remote != "" {
		alloc, p.cancelAlloc, err = remoteAllocator(o.Remote)
		return alloc, "attaching to " + redactURL(o.Remote), err
	}
	exec, err := findChrome(o.ChromePath)
	if err != nil {
		return nil, "", err
	}
	if o.ReapHelpers {
		becomeSubreaper()
		// What this process ran before the browser (a database a test
		// started, a sidecar) is not the browser's to reap.
		p.older = descendants(os.Getpid())
	}
	// A profile of our own, rather than chromedp's: Close removes it
	// together with the directory Chrome keeps its singleton socket in
	// (under $TMPDIR), which Chrome leaves behind when it is stopped.
	if p.profile, err = os.MkdirTemp("", "headroom-chrome-"); err != nil {
		return nil, "", &Error{Op: "launch", Kind: ErrLaunch, Detail: "a profile directory: " + err.Error() + ": is $TMPDIR writable?"}
	}
	if p.confined {
		if err := writePreferences(p.profile); err != nil {
			return nil, "", &Error{Op: "launch", Kind: ErrLaunch, Detail: "the profile's preferences: " + err.Error()}
		}
	}
	flags := append(launchFlags(exec, o, p.sink), chromedp.UserDataDir(p.profile))
	alloc, p.cancelAlloc = chromedp.NewExecAllocator(context.Background(), flags...)
	return alloc, "launching " + exec, nil
}

// ownContext reports whether the run's tab lives in a browser context of
// its own: when it is attached (so closing it leaves the browser's other
// tabs alone) or fenced (the context's proxy is the fence, and every tab,
// frame and worker of the context goes through it).
func (p *Page) ownContext() bool { return p.opts.Remote != "" || p.fence != nil }

// openTab starts the browser, when it is launched, and opens the run's tab
// in it, within the launch timeout.
func (p *Page) openTab(ctx, alloc context.Context, what string) error {
	o := p.opts
	parent := alloc
	var tabOpts []chromedp.ContextOption
	if p.ownContext() {
		if o.Remote == "" {
			// A launched browser must start before a context can be
			// made in it.
			var cancel context.CancelFunc
			parent, cancel = chromedp.NewContext(alloc)
			p.cancelBrowser = cancel
			err := startBrowser(ctx, parent, o.LaunchTimeout)
			if c := chromedp.FromContext(parent); c.Browser != nil && c.Browser.Process() != nil {
				p.pid = c.Browser.Process().Pid // for Close to reap, should the tab fail
			}
			if err != nil {
				return &Error{Op: "launch", Kind: ErrLaunch, Detail: what, Err: err}
			}
		}
		tabOpts = append(tabOpts, chromedp.WithNewBrowserContext(func(c *target.CreateBrowserContextParams) {
			if p.fence != nil {
				c.ProxyServer = p.fence.addr()
				c.ProxyBypassList = "<-loopback>"
			}
		}))
	}
	// The browser lives as long as the tab context given to its first
	// action: a context with no deadline, ended only by Close.
	t := &tab{}
	t.ctx, t.cancel = chromedp.NewContext(parent, tabOpts...)
	p.first, p.tabs = t, []*tab{t}
	p.cur.Store(t)
	if err := startBrowser(ctx, t.ctx, o.LaunchTimeout); err != nil {
		if o.Remote != "" {
			err = attachError(o.Remote, err)
			if ctx.Err() == nil {
				what += ": " + attachHint
			}
		}
		return &Error{Op: "launch", Kind: ErrLaunch, Detail: what, Err: err}
	}
	c := chromedp.FromContext(t.ctx)
	if c.Browser != nil && c.Browser.Process() != nil {
		p.pid = c.Browser.Process().Pid
	}
	if c.Target != nil {
		t.id = c.Target.TargetID
	}
	return nil
}

// startBrowser runs a context's first action, which starts its browser
// or opens its tab, within limit.
func startBrowser(ctx, tab context.Context, limit time.Duration) error {
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(tab) }()
	select {
	case err := <-started:
		return err
	case <-time.After(limit):
		return fmt.Errorf("no answer from the browser after %s", limit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wire subscribes to the events the page needs and applies the run's
// rules before any navigation: the browser's, then the first tab's.
func (p *Page) wire() error {
	if err := chromedp.ListenBrowser(p.first.ctx, p.onBrowserEvent); err != nil {
		return err
	}
	if err := p.allowDownloads(p.first.ctx); err != nil {
		return err
	}
	if err := p.wireTab(p.first); err != nil {
		return err
	}
	return p.loadStorage()
}

// wireTab subscribes to a tab's events and applies the run's rules in it:
// its timers watched, its determinism, its sockets guarded, every request
// it makes paused for the fence, the recorder or the replay.
func (p *Page) wireTab(t *tab) error {
	if err := chromedp.Listen(t.ctx, func(ev any) { p.onEvent(t, ev) }); err != nil {
		return err
	}
	o := p.opts
	if o.Remote != "" {
		if err := chromedp.Do(t.ctx, chromedp.EmulateViewport(int64(o.Width), int64(o.Height))); err != nil {
			return err
		}
	}
	// Before the page's own scripts, so every timer it sets is seen.
	if _, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: timerWatchJS, RunImmediately: new(true),
	}); err != nil {
		return err
	}
	if o.Deterministic {
		if _, err := chromedp.Call(t.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
			return err
		}
		if _, err := chromedp.Call(t.ctx, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
			return err
		}
		if _, err := chromedp.Call(t.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"}); err != nil {
			return err
		}
		// A tab the page opened shares its opener's renderer, and with it
		// the opener's locale override: Chrome refuses a second one.
		if _, err := chromedp.Call(t.ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en-US"}); err != nil && t == p.first {
			return err
		}
		if _, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: deterministicJS(o.Clock), RunImmediately: new(true),
		}); err != nil {
			return err
		}
	}
	if p.confined {
		// WebSockets do not pass through the Fetch domain: the page's own
		// constructor refuses them too, so a refusal is an exception the
		// page sees at once rather than a failed handshake.
		if _, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: socketGuardJS(o, p.allow), RunImmediately: new(true),
		}); err != nil {
			return err
		}
	}
	if p.confined || o.Record != nil {
		// Subscribe before enabling, so no paused request is missed; every
		// paused request must be answered or the page hangs.
		paused := chromedp.Events(t.ctx, fetch.RequestPaused)
		go func() {
			for ev, err := range paused {
				if err != nil {
					return
				}
				go p.intercept(t, ev)
			}
		}()
		if _, err := chromedp.Call(t.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
			return err
		}
	}
	return nil
}

// onEvent runs on a tab's read loop: it only updates counters.
func (p *Page) onEvent(t *tab, ev any) {
	if e, ok := ev.(*page.EventFrameNavigated); ok {
		p.visit(e.Frame)
	}
	switch e := ev.(type) {
	case *page.EventWindowOpen:
		// A popup or a target=_blank link: in a run of one tab, closed as
		// it appears (onBrowserEvent); one outside the allowed domains,
		// closed as it is followed. This is where its URL is known.
		switch {
		case !p.following() && !p.confined:
		case !p.following():
			go p.noteClosed(e.URL, "a run has one tab")
		case p.confined && !p.allow.url(e.URL):
			go p.noteClosed(e.URL, "outside the allowed domains")
		case p.openCount() >= p.opts.Tabs:
			go p.noteClosed(e.URL, "the run has "+plural.Of(p.opts.Tabs, "tab/tabs")+" open already")
		}
	case *page.EventJavascriptDialogOpening:
		go p.answerDialog(t, e)
	case *inspector.EventTargetCrashed, *inspector.EventDetached:
		if t != p.first {
			p.tabGone(t) // a popup closing, or closed: the run goes on
			return
		}
		p.crashed.Store(true)
		p.dying.Do(func() { close(p.dead) })
	default:
		t.net.observe(e)
	}
}

// Close closes the tab and, when the browser was launched for this Page,
// the browser with its profile. It is safe to call more than once. The
// first call returns what it could not undo, joined: a tab it could not
// close in an attached browser, a directory it could not remove, a
// process of Chrome's still running. A browser already gone (crashed,
// killed, disconnected) is not an error: there is nothing left to close.
func (p *Page) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	helpers := p.helpers()
	errs := []error{p.closeTab()}
	if p.cancelBrowser != nil {
		p.cancelBrowser()
	}
	singleton := p.singletonDir()
	if p.cancelAlloc != nil {
		p.cancelAlloc() // waits for a launched Chrome to exit
	}
	p.mu.Lock()
	p.kept = true
	p.mu.Unlock()
	p.keeping.Wait()
	if p.downloadTmp != "" {
		errs = append(errs, removeDir("the downloads folder", p.downloadTmp))
	}
	if p.profile != "" {
		errs = append(errs, removeDir("the browser's profile", p.profile))
		if singleton != "" {
			errs = append(errs, removeDir("the browser's singleton socket", singleton))
		}
	}
	if left := reap(helpers, 2*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes of the browser still running after it was killed: %v", left))
	}
	if p.fence != nil {
		p.fence.close()
	}
	if p.sink != nil {
		p.sink.close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("browser: close: %w", err)
	}
	return nil
}

// helpers lists the launched browser's processes apart from itself, read
// before it is stopped: once it is gone, they are no longer below it.
func (p *Page) helpers() []int {
	switch {
	case p.pid != 0 && p.opts.ReapHelpers:
		// Helpers Chrome started apart from itself (its crash handler)
		// are this process's children already: all of them are Chrome's.
		var out []int
		for _, pid := range descendants(os.Getpid()) {
			if pid != p.pid && !slices.Contains(p.older, pid) {
				out = append(out, pid)
			}
		}
		return out
	case p.pid != 0:
		return descendants(p.pid)
	}
	return nil
}

// closeTab ends the run's tab. In a browser it attached to, the tab and
// its browser context are closed by DevTools, and one left open outlives
// the run: that is an error unless the browser is gone. A launched browser
// takes its tabs with it when it stops.
func (p *Page) closeTab() error {
	if p.first == nil || p.first.cancel == nil {
		return nil
	}
	p.closeOtherTabs()
	if p.opts.Remote == "" {
		p.first.cancel()
		return nil
	}
	err := chromedp.Cancel(p.first.ctx) // cancel's work, and what it met
	if err == nil || p.crashed.Load() || browserGone(p.first.ctx) {
		return nil
	}
	return fmt.Errorf("closing the run's tab in the browser at %s: %w", redactURL(p.opts.Remote), err)
}

// browserGone reports a tab whose browser connection has dropped.
func browserGone(tab context.Context) bool {
	c := chromedp.FromContext(tab)
	if c == nil || c.Browser == nil {
		return true
	}
	select {
	case <-c.Browser.LostConnection:
		return true
	default:
		return false
	}
}

// singletonDir is the directory a launched Chrome keeps its singleton
// socket in, under $TMPDIR; Chrome leaves it behind when it is stopped.
func (p *Page) singletonDir() string {
	if p.profile == "" {
		return ""
	}
	l, err := os.Readlink(filepath.Join(p.profile, "SingletonSocket"))
	if err != nil || !strings.HasPrefix(filepath.Base(filepath.Dir(l)), "org.chromium.") {
		return ""
	}
	return filepath.Dir(l)
}

// removeDir removes a directory the Page made, saying which on failure.
func removeDir(what, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s %s: %w", what, dir, err)
	}
	return nil
}

// Allowed is the domains the page may reach (Options.AllowedDomains), and
// whether it is confined at all: a page with no allowed domains and no
// replay reaches any host.
func (p *Page) Allowed() (domains []string, confined bool) {
	return append([]string(nil), p.opts.AllowedDomains...), p.confined
}

// PID is the launched browser's process id; 0 when attached.
func (p *Page) PID() int { return p.pid }

// Blocked lists the URLs refused for being outside the allowed domains.
func (p *Page) Blocked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.blocked...)
}

// ClosedTabs lists the URLs of the new tabs and popups the page opened
// and the Page closed as they appeared: beyond Options.Tabs, or outside
// the allowed domains.
func (p *Page) ClosedTabs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.closedTabs...)
}

// URL is the page's current URL, its secret parameters redacted (see
// Snapshot.URL).
func (p *Page) URL(ctx context.Context) (string, error) {
	var u string
	err := p.do(ctx, "url", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		var err error
		u, err = chromedp.Run(ctx, chromedp.Location())
		return err
	})
	return p.shownURL(u), err
}

// do runs fn on the tab with a deadline and turns what can go wrong with
// the browser itself into typed errors.
func (p *Page) do(ctx context.Context, op, target string, timeout time.Duration, fn func(ctx context.Context) error) error {
	if p.closed.Load() {
		return &Error{Op: op, Target: target, Kind: ErrClosed}
	}
	if err := p.alive(op, target); err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(p.tab().ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the caller's cancellation too
	defer stop()
	go func() { // and a crash: nothing the tab was waiting for will come
		select {
		case <-p.dead:
			cancel()
		case <-tctx.Done():
		}
	}()
	err := fn(tctx)
	if err == nil {
		return nil
	}
	// A crash first: what fn made of it (a load or wait cut short) is not
	// what happened.
	if aerr := p.alive(op, target); aerr != nil {
		return aerr
	}
	var be *Error
	if errors.As(err, &be) {
		return named(err, op, target)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if tctx.Err() != nil {
		return &Error{Op: op, Target: target, Kind: ErrTimeout, Detail: "after " + timeout.String(), Err: err}
	}
	var perr *cdproto.Error
	if errors.As(err, &perr) {
		return &Error{Op: op, Target: target, Kind: ErrRefused, Err: err}
	}
	return &Error{Op: op, Target: target, Kind: ErrCrashed, Detail: "the connection to the browser failed", Err: err}
}

// alive reports a crashed renderer or a browser that went away.
func (p *Page) alive(op, target string) error {
	if p.crashed.Load() {
		return &Error{Op: op, Target: target, Kind: ErrCrashed, Detail: "the page's renderer crashed"}
	}
	if p.first.ctx.Err() != nil && !p.closed.Load() {
		detail := "the connection to the browser closed"
		if p.pid != 0 && !processAlive(p.pid) {
			detail = fmt.Sprintf("the browser process (pid %d) exited", p.pid)
		}
		return &Error{Op: op, Target: target, Kind: ErrCrashed, Detail: detail}
	}
	return nil
}

func processAlive(pid int) bool {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return proc.Signal(nil) == nil
}

// safeURL is a page URL fit for any output, as a HAR file writes it: no
// user:password, secret-named parameters redacted (redact.URL). Every URL
// the browser hands out passes through it.
func safeURL(u string) string { return redact.URL(u) }

// redactURL drops credentials and query from a browser address for errors.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the given browser address"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
