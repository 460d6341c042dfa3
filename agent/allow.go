package agent

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/headroom-agent/headroom/browser"
)

// Allowed is the domains a run of the task may reach: its
// allowed_domains, or, when it names none, its start URL's host alone.
func (t *Task) Allowed() []string {
	if len(t.AllowedDomains) > 0 {
		return append([]string(nil), t.AllowedDomains...)
	}
	if u, err := url.Parse(t.StartURL); err == nil && u.Hostname() != "" {
		return []string{u.Hostname()}
	}
	return nil
}

// AllowedWith is the task's allowlist as a command line changes it.
// narrow, when set, replaces it with domains that each lie within it (the
// same host, or a subdomain of an allowed name): a flag may narrow what a
// task reaches, never widen it unasked, so a domain outside is an error
// naming it. extra widens it on purpose: its domains are added, and the
// run's result records them (Result.AllowedExtra).
func (t *Task) AllowedWith(narrow, extra []string) ([]string, error) {
	own := t.Allowed()
	allowed := own
	if len(narrow) > 0 {
		if wider := outside(narrow, own); len(wider) > 0 {
			return nil, Usage(fmt.Errorf("--allow %s would widen what %s may reach (%s): --allow only narrows a task's allowed domains; --allow-extra %s widens them on purpose, and the result records it",
				strings.Join(wider, ","), t.File, strings.Join(own, ", "), strings.Join(wider, ",")))
		}
		allowed = narrow
	}
	return append(append([]string(nil), allowed...), extra...), nil
}

// extraDomains are the domains the page may reach beyond what the task
// allows; "*" when the page may reach any host.
func (t *Task) extraDomains(p *browser.Page) []string {
	domains, confined := p.Allowed()
	if !confined {
		return []string{"*"}
	}
	return outside(domains, t.Allowed())
}

// outside are the domains that reach beyond allowed (browser.Within).
func outside(domains, allowed []string) []string {
	var out []string
	for _, d := range domains {
		if !browser.Within(d, allowed) {
			out = append(out, d)
		}
	}
	return out
}
