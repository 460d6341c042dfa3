package browser

import (
	"fmt"
	"net/netip"
	"strings"
)

// The rules a storage state's cookie keeps for Chrome to take it. Chrome
// refuses the whole Network.setCookies call for one cookie it will not
// store, and the run never starts; so each cookie is checked when the
// file is read, by the rules Chrome applies there (its
// CanonicalCookie::CreateSanitizedCookie, which RFC 6265bis writes down):
// no looser, and stricter only where a cookie could never reach a page
// (a domain no host can have).
const (
	// maxNameValue bounds a cookie's name and value together, in bytes.
	maxNameValue = 4096
	// maxCookieAttribute bounds a domain, and a path once URL-escaped.
	maxCookieAttribute = 1024
)

// cookieProblem says what keeps Chrome from taking c: the field at fault,
// as the file writes it, and why, in words that quote no name or value
// (they may be sessions); "" when Chrome takes it.
func cookieProblem(c Cookie) (field, problem string) {
	if c.Name == "" && c.Value == "" {
		return "name", "and value are both empty: give the cookie its name and value, or drop it"
	}
	if p := octetProblem(c.Name, ";="); p != "" {
		return "name", p + ": a cookie's name cannot hold control characters, ';' or '=', nor begin or end with a space"
	}
	if p := octetProblem(c.Value, ";"); p != "" {
		return "value", p + ": a cookie's value cannot hold control characters or ';', nor begin or end with a space (a site that needs them stores the value encoded)"
	}
	if c.Name == "" && strings.Contains(c.Value, "=") {
		return "value", "holds '=' in a cookie with no name, which would read back as name=value: give the cookie its name"
	}
	if n := len(c.Name) + len(c.Value); n > maxNameValue {
		return "value", fmt.Sprintf("makes the name and value %d bytes together: Chrome takes at most %d", n, maxNameValue)
	}
	if field, p := prefixProblem(c); p != "" {
		return field, p
	}
	if p := cookieDomainProblem(c.Domain); p != "" {
		return "domain", p
	}
	if p := cookiePathProblem(c.Path); p != "" {
		return "path", p
	}
	switch c.SameSite {
	case "", "Strict", "Lax", "None":
	default:
		return "sameSite", "is not Strict, Lax or None (or empty, for the browser's default), written so"
	}
	return "", ""
}

// octetProblem says what in s no cookie name or value may hold: a control
// character (tab included), one of seps, or a space at either end, which
// browsers drop when they read a Cookie header. Any other character,
// spaces within and letters beyond ASCII included, is Chrome's to take.
func octetProblem(s, seps string) string {
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("holds %U, a control character", r)
		case strings.ContainsRune(seps, r):
			return fmt.Sprintf("holds '%c'", r)
		}
	}
	if strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return "begins or ends with a space"
	}
	return ""
}

// prefixProblem enforces the name prefixes that promise where a cookie
// came from (RFC 6265bis 4.1.3, and Chrome's __Http-), in any case:
// __Secure- needs secure; __Host- secure, path "/" and a domain with no
// leading dot (the host alone); __Http- secure and httpOnly; __Host-Http-
// all of these. A cookie with no name may not look like one with such a
// prefix.
func prefixProblem(c Cookie) (field, problem string) {
	if c.Name == "" {
		v := strings.ToLower(c.Value)
		if strings.HasPrefix(v, "__secure-") || strings.HasPrefix(v, "__host-") || strings.HasPrefix(v, "__http-") {
			return "value", "begins as a __Secure-, __Host- or __Http- name does, in a cookie with no name: give the cookie its name"
		}
		return "", ""
	}
	name := strings.ToLower(c.Name)
	var prefix string
	for _, p := range []string{"__host-http-", "__host-", "__http-", "__secure-"} {
		if strings.HasPrefix(name, p) {
			prefix = c.Name[:len(p)]
			break
		}
	}
	if prefix == "" {
		return "", ""
	}
	host := strings.HasPrefix(name, "__host-")
	http := strings.HasPrefix(name, "__http-") || strings.HasPrefix(name, "__host-http-")
	promise := "a name beginning " + prefix + " promises"
	switch {
	case !c.Secure:
		return "secure", "is false, and " + promise + " a secure cookie: set secure: true, or rename the cookie"
	case http && !c.HTTPOnly:
		return "httpOnly", "is false, and " + promise + " an httpOnly cookie: set httpOnly: true, or rename the cookie"
	case host && strings.HasPrefix(c.Domain, "."):
		return "domain", "begins with a dot, which sends the cookie to subdomains, and " + promise + " the host alone: drop the dot"
	case host && c.Path != "" && c.Path != "/":
		return "path", "is not \"/\", and " + promise + " a cookie for the whole host: set path: \"/\""
	}
	return "", ""
}

// cookieDomainProblem checks a cookie's domain: a host name (letters,
// digits, '-' and '_' in labels, ASCII as browsers save it, one leading
// dot for its subdomains too, one trailing dot allowed), an IPv4 address
// in full, or an IPv6 address in brackets, at most 1024 bytes. Chrome
// takes more for a domain with no leading dot, which it reads as a URL's
// host: a space, a '*', a port, a percent-escape, an address written as a
// number, a name beyond ASCII. Such a domain is no host's, or not as
// browsers save it, and the allowed domains would never match it.
func cookieDomainProblem(d string) string {
	h := strings.TrimPrefix(d, ".")
	dot := len(h) < len(d)
	const want = "name the host it is sent to, such as example.com (.example.com for its subdomains too), or an address such as 127.0.0.1 or [::1]"
	switch {
	case h == "":
		return "is empty: " + want
	case len(d) > maxCookieAttribute:
		return fmt.Sprintf("is %d bytes: Chrome takes at most %d", len(d), maxCookieAttribute)
	case strings.HasPrefix(h, "["):
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
		switch {
		case err != nil || !strings.HasSuffix(h, "]") || !a.Is6() || a.Zone() != "":
			return fmt.Sprintf("%q is not an IPv6 address in brackets: %s", clip(d, 64), want)
		case dot && (a.Is4In6() || "["+a.String()+"]" != strings.ToLower(h)):
			return fmt.Sprintf("%q: an address with a leading dot must be written as the browser writes it: write [%s], without the dot", clip(d, 64), a)
		}
		return ""
	}
	if err := CheckHost(h); err != nil {
		return err.Error()
	}
	if _, number, _ := ipv4Host(h); number {
		return "" // an address in full
	}
	for i, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" {
			return fmt.Sprintf("%q has an empty label (two dots together, or a dot at an end): %s", clip(d, 64), want)
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			case r > 0x7f:
				return fmt.Sprintf("label %d holds %U: write a name beyond ASCII in its xn-- form, as browsers save it (bücher.example is xn--bcher-kva.example)", i+1, r)
			default:
				return fmt.Sprintf("%q holds %q, which no host name has: %s", clip(d, 64), r, want)
			}
		}
	}
	return ""
}

// cookiePathProblem checks a cookie's path: empty (the file's default,
// "/"), or beginning with '/', holding no NUL, CR, LF or ';', not ending
// in a space or tab, and at most 1024 bytes once escaped as a URL's path
// is, which is the length Chrome counts.
func cookiePathProblem(p string) string {
	if p == "" {
		return ""
	}
	if p[0] != '/' {
		return "does not begin with '/': write the path the cookie is sent under, such as / or /shop"
	}
	escaped := 0
	for _, b := range []byte(p) {
		switch {
		case b == 0 || b == '\r' || b == '\n':
			return fmt.Sprintf("holds %U, a control character that ends a cookie's path", rune(b))
		case b == ';':
			return "holds ';', which ends a cookie's path"
		case b <= 0x20 || b >= 0x7f || strings.IndexByte("\"#<>?`{}|^", b) >= 0:
			escaped += 3 // %XX in the URL path Chrome measures
		default:
			escaped++
		}
	}
	if strings.HasSuffix(p, " ") || strings.HasSuffix(p, "\t") {
		return "ends with a space or tab, which browsers drop"
	}
	if escaped > maxCookieAttribute {
		return fmt.Sprintf("is %d bytes once URL-escaped: Chrome takes at most %d", escaped, maxCookieAttribute)
	}
	return ""
}
