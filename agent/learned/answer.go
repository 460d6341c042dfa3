package learned

import (
	"errors"
	"fmt"
	"strings"
)

// Answer is where a learned run's summary read its answer on the page the
// run ended on: the answer in order, each part either a line of the page,
// found again by where it stands, or words the summary wrote itself. A
// replay reads the lines from the page it ends on and asks no model; a
// line it cannot find as learned is a miss, and the summary is asked.
type Answer struct {
	Parts []Part `json:"parts"`
}

// Part is a piece of an answer: Words as written ({{name}} where a
// parameter's value stood), or a Line read from the page.
type Part struct {
	Words string `json:"words,omitempty"`
	Line  *Line  `json:"line,omitempty"`
}

// Line is a line of the page found again by where it stands: the At-th
// line under the heading Under (under the page's top when empty), in a
// list of Items like items when it stood in one, and of the learned
// Shape. Numbers are written # in Under and Shape, and parameter values
// {{name}}: they are what may change from run to run. Any other word that
// changed makes the line another one.
type Line struct {
	Under string `json:"under,omitempty"`
	At    int    `json:"at"`
	// Items is the count of items of the list the line stood in: a list
	// that grew or shrank since is read by the model, or an answer that
	// named each row would miss one.
	Items int    `json:"items,omitempty"`
	Shape string `json:"shape"`
}

// MaxAnswerParts bounds an answer's parts: no summary reads more lines.
const MaxAnswerParts = 64

func (a *Answer) check() error {
	if len(a.Parts) == 0 || len(a.Parts) > MaxAnswerParts {
		return fmt.Errorf("answer of %d parts: want 1 to %d", len(a.Parts), MaxAnswerParts)
	}
	lines := 0
	for i, p := range a.Parts {
		switch {
		case (p.Line == nil) == (p.Words == ""):
			return fmt.Errorf("answer part %d: want words or a line, one of them", i+1)
		case p.Line != nil && (p.Line.At < 1 || p.Line.Items < 0 || p.Line.Shape == ""):
			return fmt.Errorf("answer part %d: a line wants at >= 1, items >= 0 and a shape", i+1)
		case p.Line != nil && (hasControl(p.Line.Under) || hasControl(p.Line.Shape)):
			return fmt.Errorf("answer part %d: a control character in the line", i+1)
		}
		if p.Line != nil {
			lines++
		}
	}
	if lines == 0 {
		return errors.New("answer reads no line of the page")
	}
	return nil
}

// String is the answer as a person reads it: the summary's words, and
// each line read in brackets.
//
//	[line 1 under "Community", like "# members, # online"]
func (a Answer) String() string {
	var b strings.Builder
	for _, p := range a.Parts {
		if p.Line == nil {
			b.WriteString(p.Words)
			continue
		}
		b.WriteString("[line " + fmt.Sprint(p.Line.At))
		if p.Line.Under != "" {
			fmt.Fprintf(&b, " under %q", p.Line.Under)
		} else {
			b.WriteString(" of the page")
		}
		if p.Line.Items > 0 {
			fmt.Fprintf(&b, " in a list of %d", p.Line.Items)
		}
		fmt.Fprintf(&b, ", like %q]", p.Line.Shape)
	}
	return b.String()
}
