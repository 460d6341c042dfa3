package browser

import (
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// keys are the named keys Press knows, besides single characters.
var keys = map[string]string{
	"enter": kb.Enter, "tab": kb.Tab, "escape": kb.Escape, "esc": kb.Escape,
	"backspace": kb.Backspace, "delete": kb.Delete, "space": " ",
	"arrowup": kb.ArrowUp, "arrowdown": kb.ArrowDown, "arrowleft": kb.ArrowLeft, "arrowright": kb.ArrowRight,
	"up": kb.ArrowUp, "down": kb.ArrowDown, "left": kb.ArrowLeft, "right": kb.ArrowRight,
	"home": kb.Home, "end": kb.End, "pageup": kb.PageUp, "pagedown": kb.PageDown,
}

// modifiers are the keys held for a chord, by the names people write.
var modifiers = map[string]chromedp.Modifier{
	"ctrl":    chromedp.ModifierCtrl,
	"control": chromedp.ModifierCtrl,
	"shift":   chromedp.ModifierShift,
	"alt":     chromedp.ModifierAlt,
	"option":  chromedp.ModifierAlt,
	"meta":    chromedp.ModifierMeta,
	"cmd":     chromedp.ModifierMeta,
	"command": chromedp.ModifierMeta,
}

// keyNames is what ParseKey's error offers.
const keyNames = "a single character or one of Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, after Ctrl+, Shift+, Alt+ or Meta+ for a chord"

// ParseKey reads a key as Press takes it: a named key or one character,
// after any modifiers joined by "+" ("Ctrl+A", "Shift+Tab"), in any
// case. A lone "+" is the plus key.
func ParseKey(s string) (key string, mods chromedp.Modifier, err error) {
	last, held := s, ""
	switch i := strings.LastIndex(s, "+"); {
	case s == "+":
	case strings.HasSuffix(s, "++"): // Ctrl++: the key is the plus sign
		last, held = "+", s[:len(s)-2]
	case i == len(s)-1:
		return "", 0, fmt.Errorf("unknown key %q: a chord ends with its key; want %s", s, keyNames)
	case i >= 0:
		last, held = s[i+1:], s[:i]
	}
	if held != "" {
		for _, m := range strings.Split(held, "+") {
			mod, ok := modifiers[strings.ToLower(strings.TrimSpace(m))]
			if !ok {
				return "", 0, fmt.Errorf("unknown key %q: %q is not Ctrl, Shift, Alt or Meta; want %s", s, m, keyNames)
			}
			mods |= mod
		}
	}
	if last != " " {
		last = strings.TrimSpace(last)
	}
	if k, ok := keys[strings.ToLower(last)]; ok {
		return k, mods, nil
	}
	if r := []rune(last); len(r) == 1 {
		if mods&^chromedp.ModifierShift != 0 {
			// Ctrl+A is written in capitals and pressed without Shift.
			last = strings.ToLower(last)
		}
		return last, mods, nil
	}
	return "", 0, fmt.Errorf("unknown key %q: want %s", s, keyNames)
}
