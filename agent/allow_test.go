package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestAllowedWithNarrowsAndWidensOnlyOnPurpose(t *testing.T) {
	shop := &Task{File: "shop.yaml", StartURL: "https://shop.example.com/", AllowedDomains: []string{"example.com", "127.0.0.1"}}
	bare := &Task{File: "bare.yaml", StartURL: "https://shop.example.com/cart"}
	for _, c := range []struct {
		task          *Task
		narrow, extra []string
		want, refused string
	}{
		{shop, nil, nil, "example.com 127.0.0.1", ""},
		{bare, nil, nil, "shop.example.com", ""},
		{shop, []string{"shop.example.com"}, nil, "shop.example.com", ""},
		{shop, []string{"127.0.0.1"}, nil, "127.0.0.1", ""},
		{bare, []string{"api.shop.example.com"}, nil, "api.shop.example.com", ""},
		{shop, []string{"127.0.0.2"}, nil, "", "127.0.0.2"},
		{shop, []string{"shop.example.com", "other.org"}, nil, "", "other.org"},
		{bare, []string{"example.com"}, nil, "", "example.com"},
		{shop, nil, []string{"other.org"}, "example.com 127.0.0.1 other.org", ""},
		{shop, []string{"shop.example.com"}, []string{"cdn.other.org"}, "shop.example.com cdn.other.org", ""},
	} {
		got, err := c.task.AllowedWith(c.narrow, c.extra)
		switch {
		case c.refused != "":
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--allow "+c.refused+" would widen what "+c.task.File) {
				t.Errorf("%s narrowed to %v: %v; want a refusal naming %s", c.task.File, c.narrow, err, c.refused)
			}
		case err != nil || strings.Join(got, " ") != c.want:
			t.Errorf("%s narrowed to %v, widened by %v: %v, %v; want %s", c.task.File, c.narrow, c.extra, got, err, c.want)
		}
	}
}
