package browser

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostsToRead are hosts written as addresses in every way the URL
// standard reads one, and names that only look like one.
var hostsToRead = []string{
	"127.0.0.1", "example.com", "0.0.0.0", "255.255.255.255",
	"2130706433", "0x7f.1", "0X7F.0X1", "127.1", "127.0.1", "0177.0.0.1", "127.0.0.01", "127.0.0.1.",
	"0x7F000001", "0x", "1.0x", "0", "1", "0.0.1", "4294967295", "0xffffffff", "1.16777215", "1.1.65535", "1.1.1.0377",
	"4294967296", "0x100000000", "1.16777216", "1.1.65536", "1.1.1.0400", "99999999999999999999999",
	"foo.1", "foo.0x1", "a.0x", "1.2.3.4.5", "256.0.0.1", "09.1.1.1", "1e2.3", "0..1", "1.2..3",
	"127.0.0.1..", "0x1.com", "123.a", "a.0x1g", "1.0xg", "a1", "xn--bcher-kva.example", "0x1g",
}

// CheckHost reads a host as the browser does: a host Chrome reads as
// itself passes, one it reads as an address written otherwise is told
// that address, and one it refuses is told it is none.
func TestCheckHostReadsHostsAsChromeDoes(t *testing.T) {
	t.Parallel()
	p := open(t, Options{})
	list, err := json.Marshal(hostsToRead)
	if err != nil {
		t.Fatal(err)
	}
	js := fmt.Sprintf(`JSON.stringify(%s.map(h => { try { return new URL('http://' + h + '/').hostname } catch (e) { return '' } }))`, list)
	out, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	if err := json.Unmarshal([]byte(out), &read); err != nil || len(read) != len(hostsToRead) {
		t.Fatalf("Chrome's readings: %s (%v)", out, err)
	}
	for i, h := range hostsToRead {
		err := CheckHost(h)
		switch chrome := read[i]; {
		case chrome == h:
			if err != nil {
				t.Errorf("CheckHost(%q) = %v; Chrome reads it as itself", h, err)
			}
		case chrome == "":
			if err == nil || !strings.Contains(err.Error(), "it is none") {
				t.Errorf("CheckHost(%q) = %v; Chrome refuses the URL", h, err)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "write the address in full, as "+chrome) {
				t.Errorf("CheckHost(%q) = %v; Chrome reads it as %s", h, err, chrome)
			}
		}
	}
}

func TestCheckDomainAsksForAnAddressInFull(t *testing.T) {
	for d, want := range map[string]string{
		"2130706433":   "write the address in full, as 127.0.0.1",
		"0x7f.1":       "write the address in full, as 127.0.0.1",
		"0x7f.0x1":     "write the address in full, as 127.0.0.1",
		".127.1":       "write the address in full, as 127.0.0.1",
		"127.0.0.1.":   "write the address in full, as 127.0.0.1",
		"foo.1":        "it is none",
		"shop.0x1":     "it is none",
		"1.2.3.4.5":    "it is none",
		"example.com.": "is not a host name",
	} {
		if err := CheckDomain(d); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckDomain(%q) = %v; want %q", d, err, want)
		}
	}
	for _, d := range []string{"127.0.0.1", "0x1.example", "a1.example", "123.example"} {
		if err := CheckDomain(d); err != nil {
			t.Errorf("CheckDomain(%q) = %v", d, err)
		}
	}
}
