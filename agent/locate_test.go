package agent

import (
	"testing"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
)

// rows is a snapshot of a list whose items each hold a line of words and
// a button named name.
func rows(name string, lines ...string) *browser.Snapshot {
	s := &browser.Snapshot{Blocks: []browser.Block{{Text: "Open invoices", Heading: 1, Element: -1}}}
	for i, l := range lines {
		e := browser.Element{Index: i, Role: "button", Name: name, Visible: true}
		s.Elements = append(s.Elements, e)
		s.Blocks = append(s.Blocks, browser.Block{Text: l, Element: -1, List: 1, Item: i + 1}, browser.Block{Element: i, List: 1, Item: i + 1})
	}
	return s
}

func TestParamsWriteBackWholeWordsLongestFirst(t *testing.T) {
	ps := params{"invoice": "INV-1042", "n": "1", "long": "INV-1042-B"}
	for in, want := range map[string]string{
		"Pay INV-1042 now":    "Pay {{invoice}} now",
		"INV-1042-B is due":   "{{long}} is due",
		"INV-10420 stays":     "INV-10420 stays",
		"1 of 11":             "{{n}} of 11",
		"no value here":       "no value here",
		"INV-1042 · INV-1042": "{{invoice}} · {{invoice}}",
	} {
		if got := ps.writeBack(in); got != want {
			t.Errorf("writeBack(%q) = %q, want %q", in, got, want)
		}
		if got, ok := ps.bind(ps.writeBack(in)); !ok || got != in {
			t.Errorf("bind(writeBack(%q)) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ps.bind("{{account}}"); ok {
		t.Error("bind of an unknown parameter succeeded")
	}
}

func TestFindTheRowByItsParameter(t *testing.T) {
	learnedOn := rows("Pay", "INV-1042 · Acme GmbH · 120 EUR", "INV-1043 · Borealis AB · 75 EUR", "INV-1044 · Cobalt SA · 310 EUR")
	target := targetOf(learnedOn, 0, params{"invoice": "INV-1042"})
	if target.Item != "{{invoice}} · Acme GmbH · 120 EUR" || target.Nth != 1 || target.Of != 3 {
		t.Fatalf("target %+v", *target)
	}
	reversed := rows("Pay", "INV-1044 · Cobalt SA · 310 EUR", "INV-1043 · Borealis AB · 75 EUR", "INV-1042 · Acme GmbH · 120 EUR")
	for inv, want := range map[string]int{"INV-1042": 2, "INV-1043": 1, "INV-1044": 0, "INV-1045": -1} {
		if got := find(reversed, target, params{"invoice": inv}); got != want {
			t.Errorf("%s: found %d, want %d", inv, got, want)
		}
	}
	if got := find(rows("Pay", "INV-1043 · Borealis AB · 75 EUR"), target, params{"invoice": "INV-1042"}); got != -1 {
		t.Errorf("a list of one other row: found %d", got)
	}
	if got := find(rows("Pay now", "INV-1042 · Acme GmbH · 120 EUR"), target, params{"invoice": "INV-1042"}); got != -1 {
		t.Errorf("a renamed button: found %d", got)
	}
}

func TestFindLikeItemsByTheirWords(t *testing.T) {
	cards := rows("Add to cart", "Walnut desk 120 EUR", "Oak chair 75 EUR")
	target := targetOf(cards, 0, nil)
	swapped := rows("Add to cart", "Oak chair 75 EUR", "Walnut desk 120 EUR")
	if got := find(swapped, target, nil); got != 1 {
		t.Errorf("swapped: found %d, want the walnut desk's (1)", got)
	}
	changed := rows("Add to cart", "Walnut desk 99 EUR", "Oak chair 75 EUR")
	if got := find(changed, target, nil); got != -1 {
		t.Errorf("the learned item's words changed: found %d, want no match", got)
	}
	lone := &browser.Snapshot{Elements: []browser.Element{{Index: 0, Role: "button", Name: "Sign in"}},
		Blocks: []browser.Block{{Text: "Welcome", Element: -1}, {Element: 0}}}
	moved := &browser.Snapshot{Elements: []browser.Element{{Index: 0, Role: "link", Name: "Help"}, {Index: 1, Role: "button", Name: "Sign in"}},
		Blocks: []browser.Block{{Element: 0}, {Text: "Hello again", Element: -1}, {Element: 1}}}
	if got := find(moved, targetOf(lone, 0, nil), nil); got != 1 {
		t.Errorf("a lone element that moved: found %d", got)
	}
	if got := find(moved, &learned.Target{Role: "button", Name: "Pay", Nth: 1, Of: 1}, nil); got != -1 {
		t.Errorf("no such element: found %d", got)
	}
}

func TestSummaryOptional(t *testing.T) {
	for goal, want := range map[string]bool{
		"Pay invoice INV-1042.":                        true,
		"Add the walnut desk to the cart.":             true,
		"Find the cheapest desk and report its price.": false,
		"What is the total?":                           false,
		"Sign in and open the settings":                true,
	} {
		if got := summaryOptional(&Task{Goal: goal}); got != want {
			t.Errorf("%q: %v", goal, got)
		}
	}
	if summaryOptional(&Task{Goal: "Pay it.", AnswerType: "x"}) {
		t.Error("a task with an answer type")
	}
}

func TestSameShape(t *testing.T) {
	if !sameShape("/orders/8812", "/orders/8813/") || sameShape("/orders/8812", "/cart") {
		t.Error("sameShape")
	}
}
