package browser

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

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
		if len(s.Value) < redact.MinValue {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: fmt.Sprintf("secret %s: its value is shorter than %d bytes, too short to be kept out of every output", s.Name, redact.MinValue)}
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
// the requests a replay matches, as a typed password is. It builds the
// replacer that shows each value as its placeholder.
func (p *Page) learnSecrets() {
	var pairs []string
	type form struct{ text, name string }
	var forms []form
	seen := map[string]bool{}
	for _, s := range p.opts.Secrets {
		redact.Secret(s.Value)
		if p.opts.Record != nil {
			p.opts.Record.Secret("", s.Value)
		}
		if p.opts.Replay != nil {
			p.opts.Replay.Secret(s.Value)
		}
		for _, f := range []string{s.Value, url.QueryEscape(s.Value), url.PathEscape(s.Value)} {
			if !seen[f] {
				seen[f] = true
				forms = append(forms, form{f, s.Name})
			}
		}
	}
	if len(forms) == 0 {
		return
	}
	// Longer forms first, so a value inside a longer one is not cut first.
	slices.SortStableFunc(forms, func(a, b form) int { return len(b.text) - len(a.text) })
	var markup []string
	for _, f := range forms {
		pairs = append(pairs, f.text, Placeholder(f.name))
		markup = append(markup, f.text, html.EscapeString(Placeholder(f.name)))
	}
	p.placeholders = strings.NewReplacer(pairs...)
	p.placeholdersML = strings.NewReplacer(markup...)
}

// hide shows every secret's value in s as its placeholder.
func (p *Page) hide(s string) string {
	if p == nil || p.placeholders == nil || s == "" {
		return s
	}
	return p.placeholders.Replace(s)
}

// hideBody is hide for a response body of the given content type: text
// with a secret's value in it comes back with the placeholder (escaped in
// HTML and XML, where it would read as a tag); anything else as it is.
func (p *Page) hideBody(b []byte, contentType string) []byte {
	if p == nil || p.placeholders == nil || len(b) == 0 || !utf8.Valid(b) {
		return b
	}
	if ct := strings.ToLower(contentType); strings.Contains(ct, "html") || strings.Contains(ct, "xml") {
		return []byte(p.placeholdersML.Replace(string(b)))
	}
	return []byte(p.placeholders.Replace(string(b)))
}

// shownURL is a URL of the page fit for any output: its secrets'
// values as their placeholders, then redacted as every URL is.
func (p *Page) shownURL(u string) string { return safeURL(p.hide(u)) }

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

// checkSecretHosts refuses to type secrets into an element unless both
// the tab's page and the element's own document (a frame may be another
// site) are on each secret's domains.
func (p *Page) checkSecretHosts(ctx context.Context, id cdp.BackendNodeID, used []Secret) error {
	if len(used) == 0 {
		return nil
	}
	frame, err := callOn[string](ctx, id, `function() {
  const d = this.ownerDocument || document;
  return d.location ? d.location.hostname : '';
}`)
	if err != nil {
		return err
	}
	top, err := chromedp.Run(ctx, chromedp.Evaluate[string]("location.hostname"))
	if err != nil {
		return err
	}
	hosts := []string{top, frame}
	for _, s := range used {
		domains := p.secretDomains(s)
		for _, h := range hosts {
			if len(domains) == 0 {
				return fail("", "", ErrSecretDomain, "secret %s has no domains and the page is confined to none: give it domains or allow some", s.Name)
			}
			if h == "" || !Within(h, domains) {
				shown := h
				if shown == "" {
					shown = "a page with no host"
				}
				return fail("", "", ErrSecretDomain, "secret %s may be typed on %s only, and the page is on %s", s.Name, strings.Join(domains, ", "), p.hide(shown))
			}
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
