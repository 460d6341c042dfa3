package browser

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// cookie is a cookie for example.com, at /, changed by f.
func cookie(f func(c *Cookie)) Cookie {
	c := Cookie{Name: "n", Value: "v", Domain: "example.com", Path: "/", Expires: -1}
	f(&c)
	return c
}

// Cookies at the edges of Chrome's rules, each with what Chrome does with
// it: take it, or refuse it (and with it every cookie of the call).
var chromeCookies = []struct {
	what  string
	c     Cookie
	takes bool
}{
	{"a plain cookie", cookie(func(c *Cookie) {}), true},
	{"a space within the name", cookie(func(c *Cookie) { c.Name = "a b" }), true},
	{"quotes, a comma and a backslash in the name", cookie(func(c *Cookie) { c.Name = `a"b,c\d` }), true},
	{"spaces within the value", cookie(func(c *Cookie) { c.Value = "a b c" }), true},
	{"a quoted value", cookie(func(c *Cookie) { c.Value = `"v"` }), true},
	{"a comma and a backslash in the value", cookie(func(c *Cookie) { c.Value = `a,b\c` }), true},
	{"'=' in the value", cookie(func(c *Cookie) { c.Value = "a=b" }), true},
	{"letters beyond ASCII in the value", cookie(func(c *Cookie) { c.Value = "café €5 😀" }), true},
	{"letters beyond ASCII in the name", cookie(func(c *Cookie) { c.Name = "café" }), true},
	{"U+0085 and U+2028 in the value", cookie(func(c *Cookie) { c.Value = "a\u0085b\u2028c" }), true},
	{"a no-break space first in the value", cookie(func(c *Cookie) { c.Value = "\u00a0v" }), true},
	{"no name", cookie(func(c *Cookie) { c.Name = "" }), true},
	{"no value", cookie(func(c *Cookie) { c.Value = "" }), true},
	{"name and value of 4096 bytes", cookie(func(c *Cookie) { c.Name, c.Value = strings.Repeat("n", 2048), strings.Repeat("v", 2048) }), true},
	{"name and value of 4096 bytes beyond ASCII", cookie(func(c *Cookie) { c.Name, c.Value = strings.Repeat("é", 2048), "" }), true},
	{"a path with a space, a tab, '?' and '#'", cookie(func(c *Cookie) { c.Path = "/a b\tc?d#e" }), true},
	{"a path with a control character", cookie(func(c *Cookie) { c.Path = "/a\x01b" }), true},
	{"no path", cookie(func(c *Cookie) { c.Path = "" }), true},
	{"a path of 1024 bytes escaped", cookie(func(c *Cookie) { c.Path = "/" + strings.Repeat("é", 170) }), true},
	{"a path of 1024 bytes with '[', which is not escaped", cookie(func(c *Cookie) { c.Path = "/[" + strings.Repeat("p", 1022) }), true},
	{"a path that climbs", cookie(func(c *Cookie) { c.Path = "/a/../b" }), true},
	{"a domain for subdomains", cookie(func(c *Cookie) { c.Domain = ".example.com" }), true},
	{"a domain in capitals", cookie(func(c *Cookie) { c.Domain = ".EXAMPLE.COM" }), true},
	{"a domain with a trailing dot", cookie(func(c *Cookie) { c.Domain = "example.com." }), true},
	{"a domain with '_' and '-'", cookie(func(c *Cookie) { c.Domain = ".-a_b.example-.com" }), true},
	{"localhost", cookie(func(c *Cookie) { c.Domain = "localhost" }), true},
	{"a name beyond ASCII in its xn-- form", cookie(func(c *Cookie) { c.Domain = ".xn--bcher-kva.de" }), true},
	{"an IPv4 address", cookie(func(c *Cookie) { c.Domain = "127.0.0.1" }), true},
	{"an IPv4 address with a dot", cookie(func(c *Cookie) { c.Domain = ".127.0.0.1" }), true},
	{"an IPv6 address", cookie(func(c *Cookie) { c.Domain = "[::1]" }), true},
	{"an IPv6 address with a dot", cookie(func(c *Cookie) { c.Domain = ".[::1]" }), true},
	{"an IPv4 address in IPv6", cookie(func(c *Cookie) { c.Domain = "[::ffff:127.0.0.1]" }), true},
	{"a domain of 1024 bytes", cookie(func(c *Cookie) {
		c.Domain = "." + strings.Repeat(strings.Repeat("a", 63)+".", 15) + strings.Repeat("a", 59) + ".com"
	}), true},
	{"sameSite Strict", cookie(func(c *Cookie) { c.SameSite = "Strict" }), true},
	{"sameSite Lax", cookie(func(c *Cookie) { c.SameSite = "Lax" }), true},
	{"sameSite None", cookie(func(c *Cookie) { c.SameSite = "None"; c.Secure = true }), true},
	{"expired long ago", cookie(func(c *Cookie) { c.Expires = 0.5 }), true},
	{"expiring past any calendar", cookie(func(c *Cookie) { c.Expires = 1e300 }), true},
	{"__Secure- and secure", cookie(func(c *Cookie) { c.Name, c.Secure = "__Secure-id", true }), true},
	{"__Host- for the host at /", cookie(func(c *Cookie) { c.Name, c.Secure = "__Host-id", true }), true},
	{"__Host- with no path", cookie(func(c *Cookie) { c.Name, c.Secure, c.Path = "__Host-id", true, "" }), true},
	{"__Http- secure and httpOnly", cookie(func(c *Cookie) { c.Name, c.Secure, c.HTTPOnly, c.Domain = "__Http-id", true, true, ".example.com" }), true},
	{"__Host-Http- for the host", cookie(func(c *Cookie) { c.Name, c.Secure, c.HTTPOnly = "__Host-Http-id", true, true }), true},
	{"_Secure- is no prefix", cookie(func(c *Cookie) { c.Name = "_Secure-id" }), true},

	{"';' in the name", cookie(func(c *Cookie) { c.Name = "a;b" }), false},
	{"'=' in the name", cookie(func(c *Cookie) { c.Name = "a=b" }), false},
	{"CR in the name", cookie(func(c *Cookie) { c.Name = "a\rb" }), false},
	{"LF in the name", cookie(func(c *Cookie) { c.Name = "a\nb" }), false},
	{"NUL in the name", cookie(func(c *Cookie) { c.Name = "a\x00b" }), false},
	{"a tab in the name", cookie(func(c *Cookie) { c.Name = "a\tb" }), false},
	{"DEL in the name", cookie(func(c *Cookie) { c.Name = "a\x7fb" }), false},
	{"a space first in the name", cookie(func(c *Cookie) { c.Name = " n" }), false},
	{"a space last in the name", cookie(func(c *Cookie) { c.Name = "n " }), false},
	{"';' in the value", cookie(func(c *Cookie) { c.Value = "a;b" }), false},
	{"CR in the value", cookie(func(c *Cookie) { c.Value = "a\rb" }), false},
	{"LF in the value", cookie(func(c *Cookie) { c.Value = "a\nb" }), false},
	{"NUL in the value", cookie(func(c *Cookie) { c.Value = "a\x00b" }), false},
	{"a tab in the value", cookie(func(c *Cookie) { c.Value = "a\tb" }), false},
	{"U+0001 in the value", cookie(func(c *Cookie) { c.Value = "a\x01b" }), false},
	{"DEL in the value", cookie(func(c *Cookie) { c.Value = "a\x7fb" }), false},
	{"a space first in the value", cookie(func(c *Cookie) { c.Value = " v" }), false},
	{"a space last in the value", cookie(func(c *Cookie) { c.Value = "v " }), false},
	{"no name and no value", cookie(func(c *Cookie) { c.Name, c.Value = "", "" }), false},
	{"'=' in a value with no name", cookie(func(c *Cookie) { c.Name, c.Value = "", "a=b" }), false},
	{"a value with no name that looks like __Host-", cookie(func(c *Cookie) { c.Name, c.Value, c.Secure = "", "__Host-id", true }), false},
	{"a value with no name that looks like __secure-", cookie(func(c *Cookie) { c.Name, c.Value = "", "__secure-id" }), false},
	{"name and value of 4097 bytes", cookie(func(c *Cookie) { c.Name, c.Value = strings.Repeat("n", 2048), strings.Repeat("v", 2049) }), false},
	{"name of 4097 bytes beyond ASCII", cookie(func(c *Cookie) { c.Name, c.Value = strings.Repeat("é", 2048)+"x", "" }), false},
	{"a path without '/'", cookie(func(c *Cookie) { c.Path = "shop" }), false},
	{"';' in the path", cookie(func(c *Cookie) { c.Path = "/a;b" }), false},
	{"LF in the path", cookie(func(c *Cookie) { c.Path = "/a\nb" }), false},
	{"CR in the path", cookie(func(c *Cookie) { c.Path = "/a\rb" }), false},
	{"NUL in the path", cookie(func(c *Cookie) { c.Path = "/a\x00b" }), false},
	{"a space last in the path", cookie(func(c *Cookie) { c.Path = "/a " }), false},
	{"a tab last in the path", cookie(func(c *Cookie) { c.Path = "/a\t" }), false},
	{"a path of 1025 bytes escaped", cookie(func(c *Cookie) { c.Path = "/" + strings.Repeat("é", 171) }), false},
	{"a path of 1026 bytes escaped, by a quote", cookie(func(c *Cookie) { c.Path = `/"` + strings.Repeat("p", 1022) }), false},
	{"a path of 1026 bytes escaped, by '|'", cookie(func(c *Cookie) { c.Path = "/|" + strings.Repeat("p", 1022) }), false},
	{"a domain of a dot", cookie(func(c *Cookie) { c.Domain = "." }), false},
	{"a domain with two dots first", cookie(func(c *Cookie) { c.Domain = "..example.com" }), false},
	{"a domain with two dots last", cookie(func(c *Cookie) { c.Domain = "example.com.." }), false},
	{"a domain that ends in a number", cookie(func(c *Cookie) { c.Domain = "shop.1" }), false},
	{"a domain that ends in a hex number", cookie(func(c *Cookie) { c.Domain = "shop.0x1" }), false},
	{"an address of five parts", cookie(func(c *Cookie) { c.Domain = "1.2.3.4.5" }), false},
	{"an address as a number, with a dot", cookie(func(c *Cookie) { c.Domain = ".2130706433" }), false},
	{"an IPv6 address without brackets", cookie(func(c *Cookie) { c.Domain = "::1" }), false},
	{"an IPv4 address in IPv6, with a dot", cookie(func(c *Cookie) { c.Domain = ".[::ffff:127.0.0.1]" }), false},
	{"a domain of 1025 bytes", cookie(func(c *Cookie) {
		c.Domain = "." + strings.Repeat(strings.Repeat("a", 63)+".", 15) + strings.Repeat("a", 60) + ".com"
	}), false},
	{"'%' in the domain", cookie(func(c *Cookie) { c.Domain = "ex%mple.com" }), false},
	{"':' in the domain", cookie(func(c *Cookie) { c.Domain = ".example.com:80" }), false},
	{"a control character in the domain", cookie(func(c *Cookie) { c.Domain = ".exa\x01mple.com" }), false},
	{"__Secure- not secure", cookie(func(c *Cookie) { c.Name = "__Secure-id" }), false},
	{"__secure- in small letters, not secure", cookie(func(c *Cookie) { c.Name = "__secure-id" }), false},
	{"__Host- for subdomains", cookie(func(c *Cookie) { c.Name, c.Secure, c.Domain = "__Host-id", true, ".example.com" }), false},
	{"__Host- at a path", cookie(func(c *Cookie) { c.Name, c.Secure, c.Path = "__HOST-id", true, "/shop" }), false},
	{"__Http- not httpOnly", cookie(func(c *Cookie) { c.Name, c.Secure = "__Http-id", true }), false},
	{"__Host-Http- for subdomains", cookie(func(c *Cookie) { c.Name, c.Secure, c.HTTPOnly, c.Domain = "__Host-Http-id", true, true, ".example.com" }), false},
}

// Cookies Chrome takes that a storage state may not hold: a domain no
// host has (a space, a '*', a port, a path, an empty label, a name over
// 1024 bytes), one written otherwise than browsers save it, so that the
// allowed domains could not match it (an address as a number, a name
// beyond ASCII, a percent-escape), and sameSite not as Playwright
// writes it.
var refusedOnPurpose = []Cookie{
	cookie(func(c *Cookie) { c.Domain = "exa mple.com" }),
	cookie(func(c *Cookie) { c.Domain = "*.example.com" }),
	cookie(func(c *Cookie) { c.Domain = "example.com:8080" }),
	cookie(func(c *Cookie) { c.Domain = "example.com/shop" }),
	cookie(func(c *Cookie) { c.Domain = "a..b.example.com" }),
	cookie(func(c *Cookie) { c.Domain = "2130706433" }),
	cookie(func(c *Cookie) { c.Domain = "0x7f.1" }),
	cookie(func(c *Cookie) { c.Domain = "bücher.de" }),
	cookie(func(c *Cookie) { c.Domain = "ex%61mple.com" }),
	cookie(func(c *Cookie) { c.Domain = strings.Repeat(strings.Repeat("a", 63)+".", 16) + "com" }),
	cookie(func(c *Cookie) { c.SameSite = "lax" }),
	cookie(func(c *Cookie) { c.SameSite = "Bogus" }),
}

// parseCookie reads one cookie as a storage state file holds it.
func parseCookie(c Cookie) error {
	data, err := json.Marshal(StorageState{Cookies: []Cookie{c}})
	if err != nil {
		return err
	}
	_, err = ParseStorageState("state.json", data)
	return err
}

// A storage state takes the cookies Chrome takes and refuses those it
// refuses, each asked of a real Chrome: no file is refused that Chrome
// would load, and none read that would stop a run at its start.
func TestStorageStateCookiesFollowChromesRules(t *testing.T) {
	t.Parallel()
	p := open(t, Options{})
	for _, tc := range chromeCookies {
		// As loadStorage sends it.
		cp := &network.CookieParam{Name: tc.c.Name, Value: tc.c.Value, Domain: tc.c.Domain, Path: tc.c.Path,
			Secure: tc.c.Secure, HTTPOnly: tc.c.HTTPOnly, SameSite: network.CookieSameSite(tc.c.SameSite)}
		if cp.Path == "" {
			cp.Path = "/"
		}
		if tc.c.Expires > 0 {
			cp.Expires = cdp.TimeSinceEpoch(tc.c.Expires)
		}
		_, chromeErr := chromedp.Call(p.first.ctx, network.SetCookies, network.SetCookiesParams{Cookies: []*network.CookieParam{cp}})
		if (chromeErr == nil) != tc.takes {
			t.Errorf("%s: Chrome says %v; the table says it takes it: %v", tc.what, chromeErr, tc.takes)
		}
		if err := parseCookie(tc.c); (err == nil) != tc.takes {
			t.Errorf("%s: ParseStorageState = %v; Chrome takes it: %v", tc.what, err, tc.takes)
		}
	}
	for _, c := range refusedOnPurpose {
		if err := parseCookie(c); err == nil {
			t.Errorf("ParseStorageState took %+v", c)
		}
	}
}

// Each refusal names the file, the line and the field, says why, and
// quotes no cookie's name or value.
func TestStorageStateCookieErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		cookie string // the third cookie's fields, after name
		want   string
	}{
		{`"name": "hunter2;secret", "value": "v", "domain": "x.com"`, `state.json:5: cookies[2].name holds ';'`},
		{`"name": "hunter2=secret", "value": "v", "domain": "x.com"`, `state.json:5: cookies[2].name holds '='`},
		{`"name": "s", "value": "hunter2\r\nsecret", "domain": "x.com"`, `state.json:6: cookies[2].value holds U+000D, a control character`},
		{`"name": "s", "value": "hunter2\u0000secret", "domain": "x.com"`, `state.json:6: cookies[2].value holds U+0000, a control character`},
		{`"name": "s", "value": " hunter2-secret", "domain": "x.com"`, `state.json:6: cookies[2].value begins or ends with a space`},
		{`"name": "", "value": "", "domain": "x.com"`, `state.json:5: cookies[2].name and value are both empty`},
		{`"name": "__Host-hunter2", "value": "hunter2-secret", "domain": "x.com", "secure": false`, `state.json:8: cookies[2].secure is false, and a name beginning __Host- promises a secure cookie`},
		{`"name": "__Host-hunter2", "value": "hunter2-secret", "domain": ".x.com", "secure": true`, `state.json:7: cookies[2].domain begins with a dot`},
		{`"name": "s", "value": "hunter2-secret", "domain": "0x7f.1"`, `state.json:7: cookies[2].domain "0x7f.1" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
		{`"name": "s", "value": "hunter2-secret", "domain": "x.1"`, `state.json:7: cookies[2].domain "x.1" ends in a number`},
		{`"name": "s", "value": "hunter2-secret", "domain": "bücher.de"`, `state.json:7: cookies[2].domain label 1 holds U+00FC: write a name beyond ASCII in its xn-- form`},
		{`"name": "s", "value": "hunter2-secret", "domain": "x.com", "path": "shop"`, `state.json:8: cookies[2].path does not begin with '/'`},
		{`"name": "s", "value": "hunter2-secret", "domain": "x.com", "path": "/a;b"`, `state.json:8: cookies[2].path holds ';'`},
		{`"name": "s", "value": "hunter2-secret", "domain": "x.com", "sameSite": "lax"`, `state.json:8: cookies[2].sameSite is not Strict, Lax or None`},
		{`"name": "s", "value": "hunter2-secret", "domain": "x.com", "expires": 1e400`, `state.json:8: cookies.expires is a number too large to hold`},
	} {
		fields := strings.ReplaceAll(tc.cookie, ", ", ",\n      ")
		data := fmt.Sprintf("{\n  \"cookies\": [\n    {\"name\": \"a\", \"value\": \"1\", \"domain\": \"x.com\"}, {\"name\": \"b\", \"value\": \"2\", \"domain\": \"x.com\"},\n    {\n      %s\n    }\n  ]\n}\n", fields)
		_, err := ParseStorageState("state.json", []byte(data))
		if err == nil || !strings.Contains(err.Error(), "storage state "+tc.want) {
			t.Errorf("%s:\n%v\nwant %q", data, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes a name or value: %v", err)
		}
	}
	data := "{\"cookies\": [],\n \"origins\": [\n  {\"origin\": \"https://example.com\"},\n  {\"localStorage\": [],\n   \"origin\": \"http://127.1:8080\"}]}"
	if _, err := ParseStorageState("state.json", []byte(data)); err == nil || !strings.Contains(err.Error(), `storage state state.json:5: origins[1].origin has a host that "127.1" is read by a browser as the IP address 127.0.0.1`) {
		t.Errorf("an origin's host as a short address: %v", err)
	}
}
