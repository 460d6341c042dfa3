package browser

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// chromeNames are tried in order on $PATH when no browser is named.
var chromeNames = []string{
	"chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
	"chrome", "headless_shell", "headless-shell",
}

// FindChrome is the browser Open would launch for Options.ChromePath path:
// path itself, or when it is empty $CHROME_PATH, then the first of the
// usual names (chromium, chromium-browser, google-chrome, ...) on $PATH.
// The error, an *Error of kind ErrLaunch, says what to install.
func FindChrome(path string) (string, error) { return findChrome(path) }

// findChrome resolves the browser to launch: the given path, $CHROME_PATH,
// or the first usual name on $PATH.
func findChrome(path string) (string, error) {
	from := "--chrome"
	if path == "" {
		path, from = os.Getenv("CHROME_PATH"), "CHROME_PATH"
	}
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("%s names %q, which is not an executable", from, path), Err: err}
		}
		return p, nil
	}
	for _, n := range chromeNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", &Error{Op: "launch", Kind: ErrLaunch, Detail: "no Chrome or Chromium on $PATH (tried " + strings.Join(chromeNames, ", ") +
		"): install one (Debian: apt-get install chromium), or name it with --chrome PATH or CHROME_PATH"}
}

// launchFlags are chromedp's defaults (headless, --disable-dev-shm-usage,
// no background networking, ...) plus what a container needs: no GPU, no
// component updates, a fixed window. chromedp adds --no-sandbox when
// running as root and a fresh profile directory it removes afterwards.
func launchFlags(execPath string, o Options, sink *fence) []chromedp.ExecAllocatorOption {
	out := o.ChromeOutput
	if out == nil {
		out = io.Discard
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		// The browser's own calls home (sign-in, component and model
		// updates, network time) would only meet the fence of a confined
		// run, and cost time and a connection in any other.
		chromedp.Flag("disable-sync", true),
		// Frames of other sites in the page's own process (no
		// site-per-process isolation, as chromedp's defaults have it): one
		// snapshot reads them in place, their elements indexed with the
		// rest and acted on in the one tab; the fence still decides which
		// hosts a frame may load from, and a secret is typed only into a
		// frame of its own host (by the frame tree, not the page's word).
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "site-per-process,IsolateOrigins,Translate,BlinkGenPropertyTrees,OptimizationHints,OptimizationHintsFetching,"+
			"OptimizationGuideModelDownloading,OptimizationTargetPrediction,NetworkTimeServiceQuerying,MediaRouter,"+
			"DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater,"+
			"PrivacySandboxSettings4,SafeBrowsing,InterestFeedContentSuggestions,AccountConsistency,Signin"),
		chromedp.Flag("disable-popup-blocking", false), // a page may not open windows unasked
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.CombinedOutput(out),
	)
	for k, v := range o.Flags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	if sink != nil {
		// A confined run's tab has its browser context and its proxy,
		// the fence; what the browser sends outside any context goes to
		// the sink, loopback included (Chrome bypasses proxies for
		// loopback unless told not to).
		opts = append(opts, chromedp.ProxyServer(sink.addr()), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	return opts
}

// rtcPolicy keeps WebRTC inside a confined run. Its UDP (STUN, TURN,
// the connectivity checks between peers) goes to whatever address a page
// names, past the request interception and past any HTTP proxy. With
// "disable_non_proxied_udp" Chrome sends WebRTC no UDP at all: it
// connects over TCP through the proxy, the fence, which admits only the
// allowed domains, or not at all. Chrome takes this setting from the
// profile's preferences, not from a command-line flag, and a browser
// context made over DevTools inherits it from the profile.
const rtcPolicy = `{"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}}`

// writePreferences writes a new profile's preferences before the browser
// starts on it.
func writePreferences(profile string) error {
	dir := filepath.Join(profile, "Default")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return safefile.WriteBytes(filepath.Join(dir, "Preferences"), []byte(rtcPolicy), 0o600)
}

// remoteAllocator attaches to a running browser by its DevTools address.
func remoteAllocator(addr string) (context.Context, context.CancelFunc, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http" && u.Scheme != "https") {
		return nil, nil, &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("--browser %q is not a DevTools address: want ws://host:port/devtools/browser/ID or http://host:port", redactURL(addr))}
	}
	ctx, cancel := remote.NewAllocator(context.Background(), addr, remote.WithDialTimeout(10*time.Second))
	return ctx, cancel, nil
}

// attachHint says what to do when no browser answers at the address.
const attachHint = "no browser answered there: start Chrome with --remote-debugging-port=PORT and give --browser http://HOST:PORT, " +
	"or the webSocketDebuggerUrl that http://HOST:PORT/json/version names"

// attachError is err, from attaching to the browser at addr, with the
// address's user name and password taken out of its words. A user and
// password in the address reach the browser (or the proxy before it) as
// basic authentication, and must reach no output: chromedp quotes the
// address it dials, and net/http shows the user of a URL it fetched.
func attachError(addr string, err error) error {
	if err == nil {
		return nil
	}
	msg := hideUserinfo(addr, err.Error())
	if msg == err.Error() {
		return err
	}
	return &hiddenError{msg: msg, err: err}
}

// hideUserinfo is msg with the address addr, as written or quoted, shown
// as redactURL shows it, and any other spelling of its user information
// taken out.
func hideUserinfo(addr, msg string) string {
	shown := redactURL(addr)
	msg = strings.ReplaceAll(msg, addr, shown)
	if q := strconv.Quote(addr); len(q) > 2 {
		msg = strings.ReplaceAll(msg, q[1:len(q)-1], shown)
	}
	u, err := url.Parse(addr)
	if err != nil || u.User == nil {
		return msg
	}
	var forms []string // longest first
	if _, rest, ok := strings.Cut(addr, "//"); ok {
		authority, _, _ := strings.Cut(rest, "/")
		if i := strings.LastIndex(authority, "@"); i >= 0 {
			forms = append(forms, authority[:i+1])
		}
	}
	forms = append(forms, u.User.String()+"@", u.User.Username()+":***@")
	if u.User.Username() != "" {
		forms = append(forms, u.User.Username()+"@")
	}
	for _, f := range forms {
		msg = strings.ReplaceAll(msg, f, "")
	}
	// Whatever spelling is left of the password is masked where it stands.
	if pw, ok := u.User.Password(); ok && pw != "" {
		for _, f := range []string{pw, url.PathEscape(pw), url.QueryEscape(pw)} {
			msg = strings.ReplaceAll(msg, f, "***")
		}
	}
	return msg
}

// hiddenError says msg and wraps err, which says more.
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }
