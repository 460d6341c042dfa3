// Package chrometest gives tests a real browser, and tells apart a machine
// with no Chrome from a Chrome that does not start: a test skips on the
// first and fails on the second.
package chrometest

import (
	"context"
	"testing"

	"github.com/headroom-agent/headroom/browser"
)

// Require skips the test when no Chrome or Chromium is installed (none at
// $CHROME_PATH, none of the usual names on $PATH) and returns the one
// browser.Open would launch.
func Require(t testing.TB) string {
	t.Helper()
	path, err := browser.FindChrome("")
	if err != nil {
		t.Skipf("no browser installed: %v", err)
	}
	return path
}

// Open opens a page for the test with o, skipping it when no Chrome is
// installed and failing it when one is but does not start. The page is
// closed when the test ends, and a failure to close it fails the test.
func Open(t testing.TB, ctx context.Context, o browser.Options) *browser.Page {
	t.Helper()
	if o.ChromePath == "" && o.Remote == "" {
		Require(t)
	}
	p, err := browser.Open(ctx, o)
	if err != nil {
		t.Fatalf("Chrome is installed but the page did not open: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("closing the page: %v", err)
		}
	})
	return p
}
