package agent

import (
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// recent is the last steps, in full.
func (r *runner) recent() []calltypes.Taken {
	return r.taken[max(0, len(r.taken)-recentSteps):]
}

// notes fold the steps before the recent ones into a few short lines: one
// that counts them, and the last few, shortened.
func (r *runner) notes() []string {
	older := r.taken[:max(0, len(r.taken)-recentSteps)]
	if len(older) == 0 {
		return nil
	}
	var nav, changed, none int
	for _, t := range older {
		switch {
		case strings.HasPrefix(t.Outcome, string(browser.Navigated)):
			nav++
		case strings.HasPrefix(t.Outcome, string(browser.Changed)):
			changed++
		default:
			none++
		}
	}
	notes := []string{fmt.Sprintf("%d earlier steps: %d went to another page, %d changed this one, %d did nothing or failed", len(older), nav, changed, none)}
	for _, t := range older[max(0, len(older)-olderNotes):] {
		notes = append(notes, clip(t.Action.Kind+" "+t.Element+" → "+t.Outcome, noteRunes))
	}
	return notes
}
