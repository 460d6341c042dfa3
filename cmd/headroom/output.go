package main

import (
	"io"

	"github.com/headroom-agent/headroom/internal/plain"
	"github.com/headroom-agent/headroom/internal/redact"
)

// shown is what every command writes to, its standard output and error
// alike: what pages, servers and models put into its text reaches the
// terminal or the log with no secret in it (redact.Text: the process's
// secret values, secret URL parameters) and no control character acting
// on the terminal (plain.Escape). Each write is taken whole, as fprintf
// and printJSON write a message or a document at once.
type shown struct{ w io.Writer }

func (s shown) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, plain.Escape(redact.Text(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}
