package heuristic

import (
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
)

// Lists of like items, on pages as the view writes them (each rendered
// by headroom observe from a page served for the purpose): a row's or a
// card's own copy of one control, told apart only by its item's words.

const invoicesPage = `url: http://127.0.0.1:8765/invoices.html
title: Invoices
# Open invoices
INV-1042 · Acme GmbH · 120 EUR
[0] button "Pay"
INV-1043 · Borealis AB · 75 EUR
[1] button "Pay"
INV-1044 · Cobalt Ltd · 300 EUR
[2] button "Pay"
INV-1046 · Delta SA · 42 EUR
[3] button "Pay"`

func TestPickTheRowTheGoalNames(t *testing.T) {
	wantAction(t, pickOn(t, "Pay invoice INV-1043.", invoicesPage), "click [1]")
	wantAction(t, pickOn(t, "Pay the invoice of Cobalt Ltd.", invoicesPage), "click [2]")
	wantAction(t, pickOn(t, "Pay the 42 EUR invoice.", invoicesPage), "click [3]")
	reversed := `url: http://127.0.0.1:8765/reversed.html
title: Invoices
# Open invoices
INV-1046 · Delta SA · 42 EUR
[0] button "Pay"
INV-1044 · Cobalt Ltd · 300 EUR
[1] button "Pay"
INV-1043 · Borealis AB · 75 EUR
[2] button "Pay"
INV-1042 · Acme GmbH · 120 EUR
[3] button "Pay"`
	wantAction(t, pickOn(t, "Pay invoice INV-1043.", reversed), "click [2]")
	wantAction(t, pickOn(t, "Pay invoice INV-1042.", reversed), "click [3]")
	// The plan's step says which, where the goal names two.
	in := calltypes.PickInput{Goal: "Pay invoice INV-1042, then pay invoice INV-1044.",
		Plan: []string{"Pay invoice INV-1042", "pay invoice INV-1044"}, Step: 1,
		Page: calltypes.MustParsePage(invoicesPage)}
	wantAction(t, validate(t, callClickPick, ask(t, callClickPick, in)).(calltypes.Action), "click [2]")
}

// Each row's control before its words: each owns the words after it.
func TestPickTheRowWhoseWordsFollowItsControl(t *testing.T) {
	page := `url: http://127.0.0.1:8765/first.html
title: Invoices
# Open invoices
[0] button "Pay"
INV-1042 · Acme GmbH · 120 EUR
[1] button "Pay"
INV-1043 · Borealis AB · 75 EUR
[2] button "Pay"
INV-1044 · Cobalt Ltd · 300 EUR
[3] button "Pay"
INV-1046 · Delta SA · 42 EUR`
	wantAction(t, pickOn(t, "Pay invoice INV-1043.", page), "click [1]")
	wantAction(t, pickOn(t, "Pay invoice INV-1046.", page), "click [3]")
}

// A row the goal names by its code, not on the page: no other row's
// control is pressed in its stead, before or after looking further.
func TestPickNoOtherRowForOneThatIsGone(t *testing.T) {
	for _, goal := range []string{"Pay invoice INV-1045.", "Pay invoice 1045."} {
		for _, taken := range [][]string{nil, {"scroll down"}, {`click [9] on link "Open invoices" → navigated to /invoices`}} {
			a := pickOn(t, goal, invoicesPage, taken...)
			if a.Kind == calltypes.ActClick {
				t.Errorf("%q after %q: pressed %s (%s), another row's", goal, taken, a, a.Reason)
			}
		}
	}
}

func TestPickTheCardTheGoalNames(t *testing.T) {
	grid := `url: http://127.0.0.1:8765/grid.html
title: Desks
# Desks
### Oak desk
320 EUR
[0] button "Add to cart"
### Walnut desk
410 EUR
[1] button "Add to cart"
### Pine desk
190 EUR
[2] button "Add to cart"`
	wantAction(t, pickOn(t, "Add the Walnut desk to the cart", grid), "click [1]")
	wantAction(t, pickOn(t, "Add the Oak desk to the cart", grid), "click [0]")
	wantAction(t, pickOn(t, "Add the Pine desk to the cart", grid), "click [2]")
	// Titles that are links, one card a line longer: the title still
	// opens its card, and no other card's button is pressed.
	linked := `url: http://127.0.0.1:8765/cards.html
title: Desks
# Desks
3 pieces
### [0] link "Oak desk"
320 EUR
[1] button "Add to cart"
### [2] link "Walnut desk"
410 EUR On sale
[3] button "Add to cart"
### [4] link "Pine desk"
190 EUR
[5] button "Add to cart"`
	if a := pickOn(t, "Add the Walnut desk to the cart", linked); a.Kind != calltypes.ActClick || (a.Index != 2 && a.Index != 3) {
		t.Errorf("got %s (%s), want the Walnut desk's card", a, a.Reason)
	}
	wantAction(t, pickOn(t, "Add the Pine desk to the cart", linked), "click [4]")
}

func TestPickTheTableRowTheGoalNames(t *testing.T) {
	users := `url: http://127.0.0.1:8765/users.html
title: Users
# Users
Name | Email | Role
Alice | alice@example.com | Admin
[0] button "Edit"
Bob | bob@example.com | Editor
[1] button "Edit"
Carol | carol@example.com | Viewer
[2] button "Edit"`
	wantAction(t, pickOn(t, "Edit the user bob@example.com", users), "click [1]")
	// The table's header row is not the first row's: "role" names no row.
	wantAction(t, pickOn(t, "Edit Bob's role", users), "click [1]")
	wantAction(t, pickOn(t, "Edit the user carol@example.com", users), "click [2]")
}

// One control is no list: a goal's code the page does not show leaves it
// as it was.
func TestPickALoneControlAsBefore(t *testing.T) {
	page := `url: http://127.0.0.1:8765/order.html
title: Checkout
# Review your order
Order 58213 · 2 items · 96 EUR
[0] button "Continue"`
	wantAction(t, pickOn(t, "Continue with order 58214.", page), "click [0]")
	wantAction(t, pickOn(t, "Pay invoice INV-1045.", `url: http://127.0.0.1:8765/one.html
title: Invoices
INV-1042 · Acme GmbH · 120 EUR
[0] button "Pay"`), "click [0]")
}

// Two elements of one name far apart are no list: a header's link and
// the footer's copy.
func TestLikeElementsFarApartAreNoList(t *testing.T) {
	page := "url: https://shop.example/\ntitle: Shop\n[0] link \"Home\"\n# Shop\n"
	for range maxItemLines + 1 {
		page += "Words of the page.\n"
	}
	page += "[1] link \"Home\""
	if l := likeLists(calltypes.MustParsePage(page)); len(l) != 0 {
		t.Errorf("read %d lists", len(l))
	}
}
