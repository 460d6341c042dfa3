package browser

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// allowlist is the set of hosts a run may reach. A name allows itself and
// its subdomains; an IP address allows only itself, in any of its
// spellings. An empty allowlist with fenced set refuses every host (a
// replay, which has nothing to reach); an empty one without allows all.
type allowlist struct {
	names  []string
	ips    []net.IP
	fenced bool
}

func newAllowlist(domains []string, fenced bool) allowlist {
	a := allowlist{fenced: fenced || len(domains) > 0}
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(d, "."), "."))
		if ip := net.ParseIP(strings.Trim(d, "[]")); ip != nil {
			a.ips = append(a.ips, ip)
		} else {
			a.names = append(a.names, d)
		}
	}
	return a
}

// host reports whether a host name or address (no port) may be reached.
func (a allowlist) host(h string) bool {
	if !a.fenced {
		return true
	}
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if ip := net.ParseIP(h); ip != nil {
		for _, x := range a.ips {
			if x.Equal(ip) {
				return true
			}
		}
		return false // an address never matches a name's suffix
	}
	for _, d := range a.names {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// url reports whether the run may load u. URLs that never reach the
// network (data:, blob:, about:, javascript:) are the page's own.
func (a allowlist) url(u string) bool {
	if !a.fenced {
		return true
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch pu.Scheme {
	case "data", "blob", "about", "javascript":
		return true
	}
	return pu.Host != "" && a.host(pu.Hostname())
}

// jsList is the allowlist for the page's own guards: names, then
// addresses in canonical form, each marked as which.
func (a allowlist) jsList() (names, ips []string) {
	names = append([]string{}, a.names...)
	ips = []string{}
	for _, ip := range a.ips {
		ips = append(ips, ip.String())
	}
	return names, ips
}

// Within reports whether domain d allows nothing that allowed does not:
// it is one of them, or a subdomain of an allowed name. Both are written
// as Options.AllowedDomains is.
func Within(d string, allowed []string) bool {
	return newAllowlist(allowed, true).host(strings.TrimPrefix(d, "."))
}

// CheckDomain says whether d can be an allowed domain: a host name such
// as example.com (which also allows its subdomains) or an IP address
// (which allows only itself). Anything else is an error, so that a
// mistyped value never widens what a run may reach.
func CheckDomain(d string) error {
	if strings.TrimSpace(d) == "" {
		return fmt.Errorf("an allowed domain is empty: name a host such as example.com")
	}
	h := strings.TrimPrefix(d, ".")
	if net.ParseIP(strings.Trim(h, "[]")) != nil {
		return nil
	}
	// An address written another way (127.1, 0x7f.0x1) would match
	// nothing the browser loads, and one cut short would match addresses
	// as a suffix.
	if err := CheckHost(h); err != nil {
		return err
	}
	ok := len(h) <= 253
	labels := strings.Split(h, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			ok = false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				ok = false
			}
		}
	}
	if !ok {
		return fmt.Errorf("%q is not a host name or IP address (want example.com, no scheme, port or path)", d)
	}
	return nil
}

// checkScheme refuses a navigation to anything but http and https, unless
// the run allows the scheme: file: and chrome: pages show the machine, not
// the web, and data: pages are whatever the URL says.
func (p *Page) checkScheme(target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" {
		return fail("", "", ErrLoad, "%q is not a URL", safeURL(target))
	}
	s := strings.ToLower(u.Scheme)
	if s == "http" || s == "https" || target == "about:blank" {
		return nil
	}
	for _, a := range p.opts.AllowSchemes {
		if strings.EqualFold(strings.TrimSuffix(a, ":"), s) {
			return nil
		}
	}
	return fail("", "", ErrBlocked, "%s: URLs are refused (only http and https are loaded unless the scheme is allowed, --allow-scheme %s)", s, s)
}
