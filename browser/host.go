package browser

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// A host that ends in a number is an IPv4 address to a browser, in any of
// the forms inet_aton took: 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 are
// all 127.0.0.1, and foo.1 or 1.2.3.999 is no URL at all. This is the URL
// standard's IPv4 parser (url.spec.whatwg.org, "ends in a number" and
// "IPv4 parser"), which Chrome follows. Go's net/url reads such a host as
// a name, so a rule written with one spelling would never meet the other.

// CheckHost says whether a URL's host (no port; an IPv6 address with or
// without its brackets) is written as a browser reads it. A name is; an
// address is when written in full (127.0.0.1). A host that ends in a
// number is an address to a browser: written another way, the error says
// how to write it; not an address at all, the browser refuses the URL.
func CheckHost(host string) error {
	addr, number, ok := ipv4Host(host)
	switch {
	case !number:
		return nil
	case !ok:
		return fmt.Errorf("%q ends in a number, so a browser reads it as an IPv4 address, and it is none: write a host name such as example.com, or an address such as 127.0.0.1", clip(host, 64))
	case addr.String() != host:
		return fmt.Errorf("%q is read by a browser as the IP address %s: write the address in full, as %s", clip(host, 64), addr, addr)
	}
	return nil
}

// ipv4Host reads host as the URL standard does: number says whether it
// ends in a number (and so is an IPv4 address or no host at all), ok
// whether it is an address, addr the address.
func ipv4Host(host string) (addr netip.Addr, number, ok bool) {
	if strings.ContainsAny(host, ":[]") {
		return addr, false, false // IPv6, which has a form of its own
	}
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" {
		return addr, false, false
	}
	if strings.Trim(last, "0123456789") != "" {
		if _, valid := ipv4Number(last); !valid {
			return addr, false, false
		}
	}
	if len(parts) > 4 {
		return addr, true, false
	}
	var v uint64
	for i, p := range parts {
		n, valid := ipv4Number(p)
		switch {
		case !valid:
			return addr, true, false
		case i < len(parts)-1:
			if n > 255 {
				return addr, true, false
			}
			v |= n << (8 * (3 - i))
		default:
			if n >= 1<<(8*(5-len(parts))) {
				return addr, true, false
			}
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// ipv4Number reads one part of an IPv4 host: decimal, octal after a
// leading 0, hexadecimal after 0x (where nothing after it is 0).
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		// Digits too many to count are still a number, and too large.
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return 1 << 40, true
		}
		return 0, false
	}
	return n, true
}
