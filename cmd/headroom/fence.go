package main

import (
	"io"

	"github.com/headroom-agent/headroom/internal/plural"
)

// reportFence says on stderr what the pages tried beyond the allowed
// domains and their one tab: a count, and the URLs with --verbose.
func reportFence(stderr io.Writer, cmd string, refused, tabs []string, verbose bool) {
	if len(refused) == 0 && len(tabs) == 0 {
		return
	}
	fprintf(stderr, "headroom %s: refused %s outside the allowed domains; closed %s the page opened\n",
		cmd, plural.Of(len(refused), "request"), plural.Of(len(tabs), "new tab"))
	if verbose {
		for _, u := range refused {
			fprintf(stderr, "\trefused %s\n", u)
		}
		for _, u := range tabs {
			fprintf(stderr, "\tclosed tab %s\n", u)
		}
	} else {
		fprintf(stderr, "\t(--verbose lists them)\n")
	}
}
