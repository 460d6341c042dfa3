package agent

import (
	"context"
	"fmt"
	"regexp"
	"strings"
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
	if s.Text != "" {
		text, err := r.page.ExtractPage(ctx)
		if err != nil || !strings.Contains(text, s.Text) {
			return false, err
		}
	}
	return true, nil
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

// String is the check as a person would say it.
func (s Success) String() string {
	var parts []string
	if s.Text != "" {
		parts = append(parts, fmt.Sprintf("shows %q", s.Text))
	}
	if s.URL != "" {
		parts = append(parts, fmt.Sprintf("URL matches %q", s.URL))
	}
	return strings.Join(parts, " and ")
}
