package agent

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/browser"
)

// successHolds reports whether the task's success check holds on the
// page now; false when the task has none.
func (r *runner) successHolds(ctx context.Context) (bool, error) {
	s := r.t.Success
	if s == nil {
		return false, nil
	}
	if s.URL != "" {
		u, err := r.page.URL(ctx)
		if err != nil {
			return false, err
		}
		if !s.url.MatchString(u) {
			return false, nil
		}
	}
	if s.Download != "" && !slices.ContainsFunc(r.page.Downloads(), s.downloaded) {
		return false, nil
	}
	if s.Text != "" {
		text, err := r.page.ExtractPage(ctx)
		if err != nil || !strings.Contains(text, s.Text) {
			return false, err
		}
	}
	r.heldAfter = len(r.res.Steps)
	return true, nil
}

// downloaded reports a download saved under a name of the pattern.
func (s *Success) downloaded(d browser.Download) bool {
	ok, _ := path.Match(s.Download, d.Name)
	return ok && d.Saved
}

// stillHolds is successHolds, answered from the last check when it held
// and no step has been taken since: the end of a run asks once.
func (r *runner) stillHolds(ctx context.Context) (bool, error) {
	if r.heldAfter == len(r.res.Steps) {
		return true, nil
	}
	return r.successHolds(ctx)
}

// compile compiles the URL pattern, once: a loaded task's when it is
// loaded, a task built in Go's when it is run.
func (s *Success) compile() error {
	if s.url != nil || s.URL == "" {
		return nil
	}
	re, err := regexp.Compile(s.URL)
	if err != nil {
		return err
	}
	s.url = re
	return nil
}

// compileTemplate checks the URL pattern of a task as written: with its
// parameters (which checkParams has read) standing for no text, as a value
// goes in quoted; it is compiled when they are put in (Bind).
func (s *Success) compileTemplate() error {
	if !strings.Contains(s.URL, "{{") {
		return s.compile()
	}
	_, err := regexp.Compile(fill(s.URL, nil, true))
	return err
}

// String is the check as a person would say it.
func (s Success) String() string {
	var parts []string
	if s.Text != "" {
		parts = append(parts, fmt.Sprintf("shows %q", s.Text))
	}
	if s.URL != "" {
		parts = append(parts, fmt.Sprintf("URL matches %q", s.URL))
	}
	if s.Download != "" {
		parts = append(parts, fmt.Sprintf("a download named %q was saved", s.Download))
	}
	return strings.Join(parts, " and ")
}
