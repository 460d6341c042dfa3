package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func TestParseKey(t *testing.T) {
	for in, want := range map[string]struct {
		key  string
		mods chromedp.Modifier
	}{
		"Enter":            {kb.Enter, 0},
		"escape":           {kb.Escape, 0},
		"a":                {"a", 0},
		"+":                {"+", 0},
		"Ctrl+A":           {"a", chromedp.ModifierCtrl},
		"ctrl+shift+Tab":   {kb.Tab, chromedp.ModifierCtrl | chromedp.ModifierShift},
		"Alt+ArrowDown":    {kb.ArrowDown, chromedp.ModifierAlt},
		"Meta+Enter":       {kb.Enter, chromedp.ModifierMeta},
		"Ctrl++":           {"+", chromedp.ModifierCtrl},
		"Shift + PageDown": {kb.PageDown, chromedp.ModifierShift},
	} {
		key, mods, err := ParseKey(in)
		if err != nil || key != want.key || mods != want.mods {
			t.Errorf("ParseKey(%q) = %q, %v, %v; want %q, %v", in, key, mods, err, want.key, want.mods)
		}
	}
	for _, in := range []string{"", "Hyper", "Hyper+A", "Ctrl+", "Ctrl+Hyper", "ab"} {
		if _, _, err := ParseKey(in); err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("ParseKey(%q): %v, want an unknown key", in, err)
		}
	}
}

// TestKeysHoverAndWaitingForAChange works the orders menu as a person
// with a keyboard would, hovers to read a tooltip, selects a field's
// words with a chord, and waits for a change that comes after the
// action's own settling.
func TestKeysHoverAndWaitingForAChange(t *testing.T) {
	s := site(t)
	ctx := ctxT(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	steps := []Step{
		{Navigate: s.URL + "/orders/menu.html"},
		{Press: "Tab"},
		{Press: "Enter", Expect: "Cancel order 7"},
		{Press: "ArrowDown"},
		{Press: "Escape"},
		{Press: "Enter"},
		{Press: "Enter", Expect: "Status: shipped"},
		{Hover: "#help", Expect: "Shipping sends the parcel"},
		{Click: "#note"},
		{Press: "Ctrl+A"},
		{Press: "x"},
		{Click: "#later"},
		{Wait: "change", Expect: "Status: open, checked"},
	}
	for i, st := range steps {
		if _, err := p.Do(ctx, st.Action(t.TempDir())); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, st, err)
		}
	}
	note, err := p.Extract(ctx, CSS("#note"))
	if err != nil || note != "x" {
		t.Errorf("after Ctrl+A and x the note holds %q (%v), want x", note, err)
	}
	if text := observeText(t, p); strings.Contains(text, "Cancel order 7") {
		t.Errorf("the menu is still open after Escape and a pick: %q", text)
	}
}
