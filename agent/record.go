package agent

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/headroom-agent/headroom/internal/plain"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// record numbers a step, screenshots it, times it, and logs it.
func (r *runner) record(ctx context.Context, s *Step, began time.Time) {
	s.N = len(r.res.Steps) + 1
	if s.URL == "" {
		u, err := r.page.URL(ctx)
		if err != nil && ctx.Err() == nil {
			r.progress("step %d: no URL: %v", s.N, err)
		}
		s.URL = u
	}
	if s.Calls == nil {
		s.Calls = []llm.Report{}
	}
	if r.o.OutDir != "" && ctx.Err() == nil {
		if err := r.screenshot(ctx, s); err != nil {
			r.progress("step %d: no screenshot: %v", s.N, err)
		}
	}
	s.ElapsedMS = time.Since(began).Milliseconds()
	var model int64
	for _, c := range s.Calls {
		model += c.LatencyMS
	}
	s.AgentMS = max(0, s.ElapsedMS-model)
	r.res.Steps = append(r.res.Steps, *s)
	var reserved, used int64
	deployment := ""
	for _, c := range s.Calls {
		reserved += c.TokensReserved
		used += c.TokensUsed
		deployment = c.Deployment
	}
	line := fmt.Sprintf("step %d  %s", s.N, s.Action)
	if s.Target != "" {
		line += " on " + clip(s.Target, 50)
	}
	line += "  → " + clip(s.Outcome, 80)
	if s.Verdict != "" {
		line += "  [" + clip(s.Verdict, 60) + "]"
	}
	if len(s.Calls) > 0 {
		line += fmt.Sprintf("  tokens %d reserved, %d used  %s", reserved, used, deployment)
	}
	r.progress("%s", line)
}

// screenshot writes the step's screenshot into the output folder: never
// through a link planted there, a new file or a regular one replaced
// whole.
func (r *runner) screenshot(ctx context.Context, s *Step) error {
	png, err := r.page.Screenshot(ctx)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("step-%03d.png", s.N)
	if err := safefile.WriteBytes(filepath.Join(r.o.OutDir, name), png, 0o644); err != nil {
		return err
	}
	s.Screenshot = name
	return nil
}

// progress writes a line for a person watching: what a page wrote in it
// is shown with its control characters escaped, and without secrets.
func (r *runner) progress(format string, args ...any) {
	progress(r.o.Progress, format, args...)
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		line := fmt.Sprintf(format, args...)
		fmt.Fprintf(w, "headroom run: %s\n", plain.Escape(redact.Text(line)))
	}
}

func (r *runner) modelSteps() int {
	n := 0
	for _, s := range r.res.Steps {
		if !s.Scripted {
			n++
		}
	}
	return n
}

func (r *runner) maxSteps() int {
	if r.t.MaxSteps > 0 {
		return r.t.MaxSteps
	}
	return DefaultMaxSteps
}
