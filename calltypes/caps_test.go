package calltypes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// prose is ordinary English of the kind the built-ins answer with: plan
// steps, reasons, findings with figures.
const prose = `Open the advanced search page from the main menu and enter the departure city, the destination and the travel dates. ` +
	`Sort the results by price, open the cheapest direct flight that leaves after nine in the morning, and note its fare. ` +
	`The checkout button stays disabled until the delivery address form is complete, so fill in the postcode field first. ` +
	`The order summary shows three items: a stainless steel kettle at £34.99, two packs of filters at £7.50 each, and free delivery on 14 March. ` +
	`The page confirms that the booking reference QX7-4418 was issued and that a receipt was sent to the address on the account. ` +
	`Accept the cookie banner, then scroll down to the footer to reach the contact details, opening hours and the returns policy link. ` +
	`According to the annual report, revenue rose 12.4% to $3.2 billion in 2023, while operating costs fell by roughly 5% year on year. ` +
	`The search returned no results for that model number, but a newer version of the same product is listed under accessories. `

// densest returns k windows of exactly n characters of prose, each
// starting at a word, the costliest in tokens first and overlapping as
// little as the prose allows: text as long as a field allows, and as
// costly as ordinary English gets (figures and symbols cost more tokens
// per character than words do).
func densest(n, k int) []string {
	l := len([]rune(prose))
	src := []rune(strings.Repeat(prose, 2+n/l))
	type window struct {
		at, tokens int
	}
	var ws []window
	for i := range l {
		if i == 0 || src[i-1] == ' ' {
			ws = append(ws, window{i, tokens.Count(string(src[i : i+n]))})
		}
	}
	slices.SortStableFunc(ws, func(a, b window) int { return b.tokens - a.tokens })
	var picked []window
	apart := func(w window) bool {
		for _, p := range picked {
			if d := (w.at - p.at + l) % l; d < n || l-d < n {
				return false
			}
		}
		return true
	}
	for _, w := range ws {
		if len(picked) < k && apart(w) {
			picked = append(picked, w)
		}
	}
	for _, w := range ws {
		if len(picked) < k && !slices.Contains(picked, w) {
			picked = append(picked, w)
		}
	}
	out := make([]string, k)
	for i, w := range picked[:k] {
		out[i] = string(src[w.at : w.at+n])
	}
	return out
}

// english is the costliest n-character window of prose.
func english(n int) string { return densest(n, 1)[0] }

// longURL is a realistic long address: a search with filters, tracking
// parameters and a session id, the kind of URL an agent reads from a link
// and navigates to.
const longURL = "https://www.example-travel-booking.com/en-gb/flights/search/results?origin=LHR&destination=JFK" +
	"&departDate=2024-06-15&returnDate=2024-06-29&adults=2&children=1&cabinClass=premium_economy&sort=price_asc" +
	"&page=3&currency=GBP&utm_source=newsletter&utm_medium=email&utm_campaign=summer_sale" +
	"&sessionId=8f3a9c2e-4b71-4d2a-9e5f-1c6b8a7d3e20&ref=homepage_hero_banner_2&lang=en"

// longestAnswer builds the longest valid answer the named built-in's schema
// allows under its parser's limits, as the model would emit it (compact
// JSON, no HTML escaping). Where a field could hold different kinds of
// text (click-pick's text: typed words, a URL), it tries each and keeps
// the one with the most tokens.
func longestAnswer(name string) string {
	switch name {
	case Planning:
		return marshal(Plan{Steps: densest(maxStepChars, maxPlanSteps)})
	case ClickPick:
		reason := english(maxPickReason)
		candidates := []Action{
			{Kind: ActNavigate, Index: -1, Text: longURL[:min(len(longURL), maxPickTextChars)], Reason: reason},
			{Kind: ActType, Index: 1234, Text: english(maxPickTextChars), Submit: true, Reason: reason},
			{Kind: ActSelect, Index: 1234, Text: english(maxPickTextChars), Reason: reason},
		}
		best := ""
		for _, a := range candidates {
			if s := marshal(a); tokens.Count(s) > tokens.Count(best) {
				best = s
			}
		}
		return best
	case YesNo:
		return marshal(Verdict{Answer: false, Reason: english(maxVerdictReason)})
	case Summarize:
		// An extraction (a list of items with figures) costs more tokens
		// per character than prose does; keep the costlier.
		prose, list := marshal(Summary{Answer: english(maxSummaryAnswer)}), marshal(Summary{Answer: listing(maxSummaryAnswer)})
		if tokens.Count(list) > tokens.Count(prose) {
			return list
		}
		return prose
	}
	panic("no longest answer for " + name)
}

// listing returns exactly n characters of an extraction: one line per
// item, with prices, codes and dates.
func listing(n int) string {
	items := []string{"Stainless steel kettle 1.7 L", "Paper coffee filters, pack of 80", "Cast iron skillet 26 cm", "Bamboo chopping board set", "Glass food containers x6"}
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		fmt.Fprintf(&b, "%d. %s: £%d.%02d (was £%d.%02d), SKU KT-%04d, %d in stock, delivery %d %s 2024\n",
			i+1, items[i%len(items)], 5+i*7%90, i*37%100, 9+i*11%90, i*53%100, 4418+i*131, i*17%40, 1+i*5%28, months[i%12])
	}
	return string([]rune(b.String())[:n])
}

func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a model writes & and <, not \u0026
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// capFor is the rule the built-in caps follow: the longest answer's
// tokens plus 10%, rounded up to a multiple of 16.
func capFor(longest int) int64 {
	n := int64(longest) + (int64(longest)+9)/10
	return (n + 15) / 16 * 16
}

func TestBuiltinCaps(t *testing.T) {
	r := Default()
	caps := map[int64]bool{}
	for _, ty := range r.Types() {
		longest := longestAnswer(ty.Name)
		if _, err := ty.Parse(longest); err != nil {
			t.Fatalf("%s: the longest answer does not parse: %v\n%s", ty.Name, err, longest)
		}
		n := tokens.Count(longest)
		t.Logf("%-10s longest answer %4d tokens (%4d chars), cap %4d", ty.Name, n, utf8.RuneCountInString(longest), ty.MaxTokens)
		if ty.MaxTokens < int64(n) {
			t.Errorf("%s: cap %d does not cover its longest valid answer, %d tokens", ty.Name, ty.MaxTokens, n)
		}
		if float64(ty.MaxTokens) > 1.5*float64(n) {
			t.Errorf("%s: cap %d is more than 1.5x its longest valid answer, %d tokens", ty.Name, ty.MaxTokens, n)
		}
		if want := capFor(n); ty.MaxTokens != want {
			t.Errorf("%s: cap %d, but the longest answer (%d tokens) + 10%% rounded to 16 is %d: set it, and the table in builtin.go", ty.Name, ty.MaxTokens, n, want)
		}
		if ty.N != 1 {
			t.Errorf("%s: n = %d, want 1", ty.Name, ty.N)
		}
		caps[ty.MaxTokens] = true
	}
	if c, _ := r.Lookup(ClickPick); c.MaxTokens > 256 {
		t.Errorf("click-pick cap %d is above 256", c.MaxTokens)
	}
	if c, _ := r.Lookup(YesNo); c.MaxTokens > 64 {
		t.Errorf("yes-no cap %d is above 64", c.MaxTokens)
	}
	if len(caps) < 3 {
		t.Errorf("only %d distinct caps among the built-ins", len(caps))
	}
}

// The longest answers sit exactly at the limits: one more character in
// any limited field is refused.
func TestLongestAnswerIsAtTheLimits(t *testing.T) {
	steps := densest(maxStepChars, maxPlanSteps)
	steps[maxPlanSteps-1] = english(maxStepChars + 1)
	over := map[string]string{
		Planning:  marshal(Plan{Steps: steps}),
		ClickPick: marshal(Action{Kind: ActDone, Index: -1, Reason: english(maxPickReason + 1)}),
		YesNo:     marshal(Verdict{Reason: english(maxVerdictReason + 1)}),
		Summarize: marshal(Summary{Answer: english(maxSummaryAnswer + 1)}),
	}
	r := Default()
	for name, text := range over {
		ty, _ := r.Lookup(name)
		if _, err := ty.Parse(text); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("%s: an answer one character over the limit: err = %v", name, err)
		}
	}
	pick, _ := r.Lookup(ClickPick)
	if _, err := pick.Parse(marshal(Action{Kind: ActType, Index: 1, Text: english(maxPickTextChars + 1)})); err == nil {
		t.Errorf("click-pick: text over %d characters accepted", maxPickTextChars)
	}
	plan, _ := r.Lookup(Planning)
	steps = append(steps[:maxPlanSteps], "Open the page.")
	if _, err := plan.Parse(marshal(Plan{Steps: steps})); err == nil {
		t.Errorf("planning: %d steps accepted", len(steps))
	}
}
