package heuristic

import (
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
)

// The form cases a stand-in for a model must handle, on pages written as
// the view writes them: fields known only by the words beside them,
// several values in one goal, a password the page shows as dots, a
// drop-down's option named in the goal, a set of checkboxes, a field to
// focus, the form's own button, and done only on evidence.

// pickOn asks click-pick for the next action toward goal on page, after
// the steps taken.
func pickOn(t *testing.T, goal, page string, taken ...string) calltypes.Action {
	t.Helper()
	in := calltypes.PickInput{Goal: goal, Page: calltypes.MustParsePage(page), History: history(taken...)}
	return validate(t, callClickPick, ask(t, callClickPick, in)).(calltypes.Action)
}

func wantAction(t *testing.T, got calltypes.Action, want string) {
	t.Helper()
	if got.String() != want {
		t.Errorf("got %s (%s), want %s", got, got.Reason, want)
	}
}

const loginGoal = `Sign in as "ada.l" with the password "correct-horse-7".`

func loginPage(user, password string) string {
	p := "url: https://portal.example/login\ntitle: Sign in\n# Sign in\nUsername\n[0] textbox"
	if user != "" {
		p += ` value="` + user + `"`
	}
	p += "\nPassword\n[1] textbox type=password"
	if password != "" {
		p += ` value="••••"`
	}
	return p + "\n[2] checkbox \"Keep me signed in\"\n[3] button \"Cancel\"\n[4] button \"Sign in\""
}

// Two values for two fields that only their labels name; the password,
// once typed, shows dots and is not typed again; then the form's own
// button, not Cancel.
func TestPickFillsALoginByItsLabels(t *testing.T) {
	wantAction(t, pickOn(t, loginGoal, loginPage("", "")), `type [0] "ada.l"`)
	typedUser := `type [0] "ada.l" on textbox "Username" → changed`
	wantAction(t, pickOn(t, loginGoal, loginPage("ada.l", ""), typedUser), `type [1] "correct-horse-7"`)
	typedPassword := `type [1] "correct-horse-7" on textbox "Password" → changed`
	wantAction(t, pickOn(t, loginGoal, loginPage("ada.l", "x"), typedUser, typedPassword), "click [4]")
	// Signed in: the page shows who.
	welcome := "url: https://portal.example/\ntitle: Portal\n# Welcome back, ada.l\n[0] link \"Invoices\"\n[1] button \"Sign out\""
	a := pickOn(t, loginGoal, welcome, typedUser, typedPassword, `click [4] on button "Sign in" → navigated to /`)
	wantAction(t, a, "done")
	if !strings.Contains(a.Reason, "ada.l") {
		t.Errorf("done without the evidence: %s", a.Reason)
	}
}

// Secrets by name: the goal holds placeholders, not values, and the page
// shows the placeholder where the value was typed. Each placeholder is
// typed like a quoted value, into the field its name and its label name.
func TestPickTypesSecretsByName(t *testing.T) {
	const goal = "Sign in as <secret:portal_user> with the password <secret:portal_password> and report the open invoices."
	wantAction(t, pickOn(t, goal, loginPage("", "")), `type [0] "<secret:portal_user>"`)
	typedUser := `type [0] "<secret:portal_user>" on textbox "Username" → changed`
	wantAction(t, pickOn(t, goal, loginPage("<secret:portal_user>", ""), typedUser), `type [1] "<secret:portal_password>"`)
	typedPassword := `type [1] "<secret:portal_password>" on textbox "Password" → changed`
	wantAction(t, pickOn(t, goal, loginPage("<secret:portal_user>", "x"), typedUser, typedPassword), "click [4]")
}

// Refused, the same page with an error is not done, and a check after
// the click says no.
func TestARefusedLoginIsNotDone(t *testing.T) {
	refused := loginPage("ada.l", "") + "\n+ The password is incorrect."
	clicked := `click [4] on button "Sign in" → changed`
	if a := pickOn(t, loginGoal, refused, `type [1] "correct-horse-7" on textbox "Password" → changed`, clicked); a.Kind == calltypes.ActDone {
		t.Errorf("done on a refused login: %s", a.Reason)
	}
	in := calltypes.CheckInput{Question: "Does the page now show that the goal is met?", Goal: loginGoal, LastAction: took(clicked), Page: calltypes.MustParsePage(refused)}
	if v := validate(t, callYesNo, ask(t, callYesNo, in)).(calltypes.Verdict); v.Answer || !strings.Contains(v.Reason, "incorrect") {
		t.Errorf("got %+v", v)
	}
}

// A drop-down's option the goal names, though it quotes nothing.
func TestPickChoosesTheOptionTheGoalNames(t *testing.T) {
	page := `url: https://shop.example/checkout
title: Checkout
## Delivery
[0] combobox "Delivery" value="Standard (3-5 days)" options="Standard (3-5 days)","Express delivery","Pick up in store"
[1] button "Back"
[2] button "Continue"`
	goal := "Choose express delivery and continue."
	wantAction(t, pickOn(t, goal, page), `select [0] "Express delivery"`)
	chosen := strings.Replace(page, `value="Standard (3-5 days)"`, `value="Express delivery"`, 1)
	wantAction(t, pickOn(t, goal, chosen, `select [0] "Express delivery" on combobox "Delivery" → changed`), "click [2]")
}

// The checkboxes the goal names, each once, the one already checked left
// as it is, then save.
func TestPickChecksTheSetOfBoxesTheGoalNames(t *testing.T) {
	page := func(hiking, climbing bool) string {
		on := map[bool]string{true: " checked"}
		return `url: https://club.example/newsletters
title: Newsletters
# Your newsletters
[0] checkbox "Hiking"` + on[hiking] + `
[1] checkbox "Cycling" checked
[2] checkbox "Climbing"` + on[climbing] + `
[3] button "Save"`
	}
	goal := "Subscribe to the hiking and climbing newsletters, then save."
	wantAction(t, pickOn(t, goal, page(false, false)), "click [0]")
	one := `click [0] on checkbox "Hiking" → changed; now checked`
	wantAction(t, pickOn(t, goal, page(true, false), one), "click [2]")
	two := `click [2] on checkbox "Climbing" → changed; now checked`
	wantAction(t, pickOn(t, goal, page(true, true), one, two), "click [3]")
}

// A goal that asks to focus a field gets a click on it, not typing.
func TestPickFocusesAField(t *testing.T) {
	page := "url: https://shop.example/\ntitle: Shop\n[0] link \"Home\"\n[1] searchbox \"Search\"\n[2] button \"Go\""
	wantAction(t, pickOn(t, "Click into the search box.", page), "click [1]")
	wantAction(t, pickOn(t, "Click into the search box.", page, `click [1] on searchbox "Search" → nothing`), "done")
}

// An answer answers: the count asked for, the one price of several the
// superlative picks, what a deed left on the page.
func TestSummaryAnswersWhatTheGoalAsks(t *testing.T) {
	results := calltypes.MustParsePage(`url: https://shop.example/search?q=jacket
title: Jackets
# 3 jackets
Join 40,000 readers: new jackets every month.
Fjellform Aurora shell jacket 316.95 EUR Add to cart
Nordkapp Breen rain jacket 206.95 EUR Add to cart
Vidda Kvam down jacket 440.95 EUR Add to cart`)
	for _, c := range []struct {
		goal string
		hist []calltypes.Taken
		want string
	}{
		{"Search for jackets and report how many jackets are shown.", nil, "3 jackets"},
		{"Search for jackets and report the price of the most expensive one.", nil, "Vidda Kvam down jacket 440.95 EUR Add to cart"},
		{"What is the cheapest jacket?", nil, "Nordkapp Breen rain jacket 206.95 EUR Add to cart"},
	} {
		in := calltypes.SummaryInput{Goal: c.goal, History: c.hist, Page: results}
		if s := validate(t, callSummarize, ask(t, callSummarize, in)).(calltypes.Summary); s.Answer != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.goal, s.Answer, c.want)
		}
	}
	added := calltypes.MustParsePage(`url: https://shop.example/search?q=jacket
title: Jackets
Fjellform Aurora shell jacket 316.95 EUR Add to cart
Nordkapp Breen rain jacket 206.95 EUR Added
Vidda Kvam down jacket 440.95 EUR Add to cart`)
	in := calltypes.SummaryInput{Goal: "Add the rain jacket to the cart.", Page: added,
		History: history(`click [5] on button "Add to cart" in "Nordkapp Breen rain jacket" → changed; it now reads "Added"`)}
	if s := validate(t, callSummarize, ask(t, callSummarize, in)).(calltypes.Summary); s.Answer != "Nordkapp Breen rain jacket 206.95 EUR Added" {
		t.Errorf("a deed's answer: %q", s.Answer)
	}
}
