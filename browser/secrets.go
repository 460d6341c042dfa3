package browser

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"

	"github.com/headroom-agent/headroom/internal/redact"
)

// Secret is a value the page may be given by name: typed where a type
// action's text holds its placeholder, on its domains only, and shown to
// no one.
type Secret struct {
	Name  string
	Value string
	// Domains are where it may be typed, written as
	// Options.AllowedDomains is (browser.Within rules); empty means the
	// page's AllowedDomains, and a page confined to none refuses it.
	Domains []string
}

// Placeholder is what stands for the secret named name wherever its value
// would be shown, and what a type action's text holds to type it.
func Placeholder(name string) string { return "<secret:" + name + ">" }

// placeholderRE finds the placeholders in a type action's text, names
// that are not a secret's included, so that they are errors rather than
// typed as they are.
var placeholderRE = regexp.MustCompile(`<secret:([^<>]*)>`)

// secretNameRE is what a secret's name may be: it stands in a placeholder
// and in error messages, so it is a plain word.
var secretNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// PlaceholderNames are the names text's placeholders give, in order,
// names no secret has included: what a task file is checked by.
func PlaceholderNames(text string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// CheckSecretName says why name cannot be a secret's, nil when it can:
// it stands in a placeholder and in messages.
func CheckSecretName(name string) error {
	if !secretNameRE.MatchString(name) {
		return fmt.Errorf("%q is not a secret name: a word of letters, digits, '_', '.' or '-' (at most 64)", name)
	}
	return nil
}

// checkSecrets refuses secrets that could not be kept: a name that cannot
// stand in a placeholder or is given twice, a value too short to be
// scrubbed from every output, a domain that is no host name.
func (o *Options) checkSecrets() error {
	seen := map[string]bool{}
	for i, s := range o.Secrets {
		if err := CheckSecretName(s.Name); err != nil {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("secret %d", i+1), Err: err}
		}
		if seen[s.Name] {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("secret %s is given twice", s.Name)}
		}
		seen[s.Name] = true
		if err := redact.Usable(s.Value); err != nil {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("secret %s: its value cannot be kept out of every output", s.Name), Err: err}
		}
		if strings.Contains(s.Value, "<secret:") {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("secret %s: its value holds a placeholder", s.Name)}
		}
		for _, d := range s.Domains {
			if err := CheckDomain(d); err != nil {
				return &Error{Op: "launch", Kind: ErrLaunch, Detail: "secret " + s.Name + "'s domains", Err: err}
			}
		}
	}
	return nil
}

// learnSecrets makes every secret's value secret before the page can show
// it: in every output (redact.Secret), in the HAR being recorded and in
// the requests a replay matches, as a typed password is.
func (p *Page) learnSecrets() {
	for _, s := range p.opts.Secrets {
		redact.Secret(s.Value)
		if p.opts.Record != nil {
			p.opts.Record.Secret("", s.Value)
		}
		if p.opts.Replay != nil {
			p.opts.Replay.Secret(s.Value)
		}
	}
}

// shownSecrets is how the page's words show the run's secrets, by the
// host the words come from: by name (the placeholder) where the host is
// on the secret's domains, so the model can use the value it cannot see;
// elsewhere by the Marker alone, so a page off those domains cannot learn
// a value by which of its own words the product names (sixty buttons,
// "PIN 0000" to "PIN 9999"). Each value is found in any form the page
// gives it (redact.Set): upper-cased, normalised, split.
type shownSecrets struct {
	mu     sync.Mutex
	byHost map[string]*redact.Set // by host, and host + "\x00ml" for markup
}

// shown is the set that shows the secrets on host: placeholders as text,
// or escaped for HTML and XML when markup is set. Nil without secrets.
func (p *Page) shown(host string, markup bool) *redact.Set {
	if len(p.opts.Secrets) == 0 {
		return nil
	}
	key := host
	if markup {
		key += "\x00ml"
	}
	p.secretsShown.mu.Lock()
	defer p.secretsShown.mu.Unlock()
	if set, ok := p.secretsShown.byHost[key]; ok {
		return set
	}
	// Where one value holds another, the longer match names it (Set).
	set := &redact.Set{}
	for _, s := range p.opts.Secrets {
		with := redact.Marker
		if p.secretAllowedOn(s, host) {
			with = Placeholder(s.Name)
		}
		if markup {
			with = html.EscapeString(with)
		}
		set.Add(s.Value, with)
	}
	if p.secretsShown.byHost == nil {
		p.secretsShown.byHost = map[string]*redact.Set{}
	}
	p.secretsShown.byHost[key] = set
	return set
}

// secretAllowedOn reports whether s may be shown by name, and typed, on
// host.
func (p *Page) secretAllowedOn(s Secret, host string) bool {
	domains := p.secretDomains(s)
	return host != "" && len(domains) > 0 && Within(host, domains)
}

// heldOutside names the secrets among values (as the page's set found
// them) that are not allowed on host: what makes an element showing them
// one no action may touch there.
func (p *Page) heldOutside(values []string, host string) []string {
	var out []string
	for _, s := range p.opts.Secrets {
		if slices.Contains(values, s.Value) && !p.secretAllowedOn(s, host) && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// hide shows every secret's value in s as the page at hand shows it (see
// shownSecrets): by name on the host the tab was last seen on, if it is
// on the secret's domains, else by the Marker.
func (p *Page) hide(s string) string { return p.hideOn(p.lastHost(), s) }

// hideOn is hide for words that come from host.
func (p *Page) hideOn(host, s string) string {
	if p == nil || s == "" {
		return s
	}
	return p.shown(host, false).Replace(s)
}

// hideBody is hide for a response body from host, of the given content
// type: text with a secret's value in it comes back with the placeholder
// (escaped in HTML and XML, where it would read as a tag); anything else
// as it is.
func (p *Page) hideBody(b []byte, contentType, host string) []byte {
	if p == nil || len(p.opts.Secrets) == 0 || len(b) == 0 || !utf8.Valid(b) {
		return b
	}
	ct := strings.ToLower(contentType)
	markup := strings.Contains(ct, "html") || strings.Contains(ct, "xml")
	return []byte(p.shown(host, markup).Replace(string(b)))
}

// shownURL is a URL of the page fit for any output: its secrets'
// values shown as the URL's own host shows them, then redacted as every
// URL is.
func (p *Page) shownURL(u string) string { return safeURL(p.hideOn(hostOf(u), u)) }

// lastHost is the host of the tab's document when it was last observed
// or acted on; "" before that.
func (p *Page) lastHost() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

// seenAt notes the tab's document's URL, for lastHost.
func (p *Page) seenAt(u string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = hostOf(u)
}

func hostOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Hostname()
}

// secretsIn returns text with every placeholder replaced by its secret's
// value, and the secrets it names; an unknown name is an error naming it.
func (p *Page) secretsIn(text string) (string, []Secret, error) {
	if !strings.Contains(text, "<secret:") {
		return text, nil, nil
	}
	var used []Secret
	var unknown []string
	out := placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		for _, s := range p.opts.Secrets {
			if s.Name == name {
				if !slices.ContainsFunc(used, func(u Secret) bool { return u.Name == name }) {
					used = append(used, s)
				}
				return s.Value
			}
		}
		unknown = append(unknown, name)
		return m
	})
	if len(unknown) > 0 {
		known := make([]string, len(p.opts.Secrets))
		for i, s := range p.opts.Secrets {
			known[i] = s.Name
		}
		have := "no secrets are declared"
		if len(known) > 0 {
			have = "declared: " + strings.Join(known, ", ")
		}
		return "", nil, fail("", "", ErrNotFound, "no secret named %q (%s)", clip(unknown[0], 64), have)
	}
	return out, used, nil
}

// secretDomains are where s may be typed: its own domains, else the
// page's allowed ones.
func (p *Page) secretDomains(s Secret) []string {
	if len(s.Domains) > 0 {
		return s.Domains
	}
	return p.opts.AllowedDomains
}

// checkSecretHosts refuses to type secrets into an element unless every
// frame that holds it, from the tab's top to the element's own (frames,
// as the browser's frame tree has them: nodeFrames), is on each secret's
// domains.
func (p *Page) checkSecretHosts(frames []*cdp.Frame, used []Secret) error {
	for _, s := range used {
		domains := p.secretDomains(s)
		if len(domains) == 0 {
			return fail("", "", ErrSecretDomain, "secret %s has no domains and the page is confined to none: give it domains or allow some", s.Name)
		}
		for i, f := range frames {
			h := frameHost(f)
			if p.secretAllowedOn(s, h) {
				continue
			}
			where := "the page is on " + hostOrNone(h)
			if i > 0 {
				where = "the field is in a frame on " + hostOrNone(h)
			}
			return fail("", "", ErrSecretDomain, "secret %s may be typed on %s only, and %s: nothing was typed", s.Name, strings.Join(domains, ", "), where)
		}
	}
	return nil
}

// targetName is t as errors name it; empty for none.
func targetName(t Target) string {
	if t == nil {
		return ""
	}
	return t.String()
}
