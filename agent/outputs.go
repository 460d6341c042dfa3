package agent

import (
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// OutputError is outputs that could not be written: the run itself may
// have gone well.
type OutputError struct {
	Path string // the folder or file that was not written
	Err  error
}

func (e *OutputError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// WriteOutputs writes result.json and report.html into dir, beside the
// steps' screenshots: each whole or not at all, and never through a link
// planted in the folder.
func WriteOutputs(dir string, res *Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteBytes(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(dir, "report.html"), 0o644, func(w io.Writer) error {
		return WriteReport(w, res, dir)
	})
}
