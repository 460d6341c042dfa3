package heuristic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Recorded pages: a shop's search page, its results and a detail page, and
// a contact form with the page it leads to.

const searchGoal = `Search for "blue widget", then open its details page`

var (
	shopNav = []calltypes.Element{
		{Index: 0, Role: "link", Name: "Home", Href: "https://shop.example/"},
		{Index: 1, Role: "link", Name: "Widgets", Href: "https://shop.example/c/widgets"},
		{Index: 2, Type: "search", Role: "searchbox", Name: "Search products", Placeholder: "Search products"},
		{Index: 3, Type: "submit", Role: "button", Name: "Search"},
	}

	searchPage = testPage{
		URL: "https://shop.example/", Title: "Example Shop",
		Elements: shopNav,
		Text:     "Example Shop. Widgets, gadgets and spare parts. Free shipping over $50.",
	}.page()

	resultsPage = testPage{
		URL: "https://shop.example/search?q=blue+widget", Title: "Search results – Example Shop",
		Elements: append(withValue(shopNav, 2, "blue widget"),
			calltypes.Element{Index: 4, Role: "link", Name: "Blue Widget", Href: "/item/17"},
			calltypes.Element{Index: 5, Role: "link", Name: "Blue Widget Pro", Href: "/item/18"},
			calltypes.Element{Index: 6, Role: "link", Name: "Red Widget", Href: "/item/19"},
			calltypes.Element{Index: 7, Role: "link", Name: "Next page", Href: "/search?q=blue+widget&page=2"},
		),
		Text: "3 results for blue widget. Blue Widget – $12.00. Blue Widget Pro – $25.00. Red Widget – $9.00.",
	}.page()

	detailPage = testPage{
		URL: "https://shop.example/item/17", Title: "Blue Widget – Example Shop",
		Elements: append(slices.Clone(shopNav),
			calltypes.Element{Index: 4, Role: "button", Name: "Add to cart"},
			calltypes.Element{Index: 5, Role: "link", Name: "Blue Widget Pro", Href: "/item/18"},
		),
		Text: "Blue Widget. Price: $12.00. In stock.\nDetails: a sturdy blue widget made of recycled steel, 10 cm wide. Ships in 2 days.",
	}.page()
)

const formGoal = `Fill in the contact form: name "Ada Lovelace", email "ada@example.com", topic Billing, message "Please resend invoice 42", then submit it.`

var (
	formFields = []calltypes.Element{
		{Index: 0, Role: "link", Name: "Home", Href: "/"},
		{Index: 1, Type: "text", Role: "textbox", Name: "Full name", Placeholder: "Your name"},
		{Index: 2, Type: "email", Role: "textbox", Name: "Email", Placeholder: "you@example.com"},
		{Index: 3, Role: "combobox", Name: "Topic", Value: "General", Options: []string{"General", "Billing", "Returns"}},
		{Index: 4, Role: "textbox", Name: "Message"},
		{Index: 5, Type: "submit", Role: "button", Name: "Send"},
	}

	thanksPage = testPage{
		URL: "https://shop.example/contact/sent", Title: "Message sent",
		Elements: []calltypes.Element{{Index: 0, Role: "link", Name: "Home", Href: "/"}},
		Text:     "Thank you, Ada Lovelace. We will reply to ada@example.com about Billing within a day.",
	}.page()
)

// formPage is the contact form with the first n fields filled in.
func formPage(n int) calltypes.Page {
	els := slices.Clone(formFields)
	for i, v := range []string{"Ada Lovelace", "ada@example.com", "Billing", "Please resend invoice 42"}[:n] {
		els[i+1].Value = v
	}
	return testPage{
		URL: "https://shop.example/contact", Title: "Contact us", Elements: els,
		Text: "Contact us. We answer within a day. Topic General Billing Returns",
	}.page()
}

// testPage writes a page as its elements and then its words, a line a
// sentence; the view it becomes is what a call reads.
type testPage struct {
	URL, Title string
	Elements   []calltypes.Element
	Text       string
}

func (t testPage) page() calltypes.Page {
	p := calltypes.Page{URL: t.URL, Title: t.Title}
	for _, line := range strings.Split(t.Text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			p.Lines = append(p.Lines, calltypes.Line{Text: line})
		}
	}
	for _, e := range t.Elements {
		p.Lines = append(p.Lines, calltypes.Line{Element: &e})
	}
	return p
}

// setValue is p with the element at index holding v.
func setValue(p calltypes.Page, index int, v string) calltypes.Page {
	p.Lines = slices.Clone(p.Lines)
	for i, l := range p.Lines {
		if l.Element != nil && l.Element.Index == index {
			e := *l.Element
			e.Value = v
			p.Lines[i].Element = &e
		}
	}
	return p
}

func withValue(els []calltypes.Element, index int, v string) []calltypes.Element {
	out := slices.Clone(els)
	out[index].Value = v
	return out
}

// schemaFormat is a call's response_format for a type.
func schemaFormat(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"type": "json_schema",
		"json_schema": map[string]any{
			"name": name, "strict": true,
			"schema": map[string]any{"type": "object"},
		},
	})
	return b
}

// ask sends one call of the named type with in as its user message.
func ask(t testing.TB, name string, in any) string {
	t.Helper()
	msg, ok := in.(string)
	if !ok {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		msg = calltypes.Message(b) // as the built-ins send their input
	}
	r := azuresim.Request{
		Deployment: "agent", ResponseFormat: schemaFormat(name), MaxTokens: 4096,
		Messages: []tokens.Message{
			{Role: "system", Content: "Answer with JSON only."},
			{Role: "user", Content: msg},
		},
	}
	out := Model{}.Reply(r)
	if again := (Model{}).Reply(r); again != out {
		t.Fatalf("%s: two answers to one call:\n%s\n%s", name, out, again)
	}
	return out
}

// answerFields are the fields each type's strict schema requires.
var answerFields = map[string][]string{
	callPlanning:  {"steps"},
	callClickPick: {"action", "index", "text", "reason"},
	callYesNo:     {"answer", "reason"},
	callSummarize: {"answer"},
}

// strict decodes out into v as a strict schema would have it: one JSON
// object, every field present, nothing else.
func strict(out, name string, v any) error {
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the answer")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &fields); err != nil {
		return err
	}
	for _, f := range answerFields[name] {
		if _, ok := fields[f]; !ok {
			return errors.New("no field " + f)
		}
	}
	return nil
}

// validate checks an answer against its type and the bounds the rules
// promise, and returns the decoded answer.
func validate(t testing.TB, name, out string) any {
	t.Helper()
	var err error
	var v any
	switch name {
	case callPlanning:
		var p calltypes.Plan
		if err = strict(out, name, &p); err == nil {
			if len(p.Steps) < 1 || len(p.Steps) > maxSteps {
				t.Fatalf("plan of %d steps: %s", len(p.Steps), out)
			}
			for _, s := range p.Steps {
				if s == "" || len(s) > maxStep {
					t.Fatalf("step %q (%d bytes): %s", s, len(s), out)
				}
			}
		}
		v = p
	case callClickPick:
		var a calltypes.Action
		if err = strict(out, name, &a); err == nil {
			switch a.Kind {
			case calltypes.ActClick, calltypes.ActType, calltypes.ActSelect:
				if a.Index < 0 {
					t.Fatalf("%s without an element: %s", a.Kind, out)
				}
			case calltypes.ActDone, calltypes.ActScroll:
				if a.Index != -1 {
					t.Fatalf("%s with index %d: %s", a.Kind, a.Index, out)
				}
			default:
				t.Fatalf("unknown action %q: %s", a.Kind, out)
			}
		}
		v = a
	case callYesNo:
		var vd calltypes.Verdict
		err = strict(out, name, &vd)
		v = vd
	case callSummarize:
		var s calltypes.Summary
		if err = strict(out, name, &s); err == nil && len(s.Answer) > maxSummary {
			t.Fatalf("summary of %d bytes", len(s.Answer))
		}
		v = s
	default:
		t.Fatalf("no call type %q", name)
	}
	if err != nil {
		t.Fatalf("%s answer %s: %v", name, out, err)
	}
	return v
}

func TestHeuristicPick(t *testing.T) {
	plan := []string{`Search for "blue widget"`, "Open its details page"}
	for _, tc := range []struct {
		name string
		in   calltypes.PickInput
		want calltypes.Action // Reason is not compared
	}{
		{"search box first", calltypes.PickInput{Goal: searchGoal, Plan: plan, Page: searchPage},
			calltypes.Action{Kind: "type", Index: 2, Text: "blue widget"}},
		{"typed: press search", calltypes.PickInput{Goal: searchGoal, Plan: plan,
			Page:    testPage{URL: searchPage.URL, Title: searchPage.Title, Elements: withValue(shopNav, 2, "blue widget")}.page(),
			History: history(`type [2] "blue widget"`)},
			calltypes.Action{Kind: "click", Index: 3}},
		{"results: open the first match", calltypes.PickInput{Goal: searchGoal, Plan: plan, Step: 1, Page: resultsPage,
			History: history(`type [2] "blue widget"`, "click [3]")},
			calltypes.Action{Kind: "click", Index: 4}},
		{"results: not the same link twice", calltypes.PickInput{Goal: searchGoal, Plan: plan, Step: 1, Page: resultsPage,
			History: history(`type [2] "blue widget"`, "click [3]", "click [4]")},
			calltypes.Action{Kind: "click", Index: 5}},
		{"detail page: done", calltypes.PickInput{Goal: searchGoal, Plan: plan, Step: 1, Page: detailPage,
			History: history(`type [2] "blue widget"`, "click [3]", "click [4]")},
			calltypes.Action{Kind: "done", Index: -1}},
		{"detail page before acting: not done", calltypes.PickInput{Goal: searchGoal, Page: detailPage},
			calltypes.Action{Kind: "type", Index: 2, Text: "blue widget"}},
		{"unquoted search phrase", calltypes.PickInput{Goal: "search for red widgets and open the cheapest", Page: searchPage},
			calltypes.Action{Kind: "type", Index: 2, Text: "red widgets"}},
		{"unquoted goal, details shown: done", calltypes.PickInput{Goal: "search for blue widget and open its details", Page: detailPage,
			History: history(`type [2] "blue widget"`, "click [3]", "click [4]")},
			calltypes.Action{Kind: "done", Index: -1}},
		{"form: name first", calltypes.PickInput{Goal: formGoal, Page: formPage(0)},
			calltypes.Action{Kind: "type", Index: 1, Text: "Ada Lovelace"}},
		{"form: then email", calltypes.PickInput{Goal: formGoal, Page: formPage(1),
			History: history(`type [1] "Ada Lovelace"`)},
			calltypes.Action{Kind: "type", Index: 2, Text: "ada@example.com"}},
		{"form: topic from the word after its name", calltypes.PickInput{Goal: formGoal, Page: formPage(2),
			History: history(`type [1] "Ada Lovelace"`, `type [2] "ada@example.com"`)},
			calltypes.Action{Kind: "select", Index: 3, Text: "Billing"}},
		{"form: message", calltypes.PickInput{Goal: formGoal, Page: formPage(3),
			History: history(`type [1] "Ada Lovelace"`, `type [2] "ada@example.com"`, `select [3] "Billing"`)},
			calltypes.Action{Kind: "type", Index: 4, Text: "Please resend invoice 42"}},
		{"form filled: submit", calltypes.PickInput{Goal: formGoal, Page: formPage(4),
			History: history(`type [2] "ada@example.com"`, `select [3] "Billing"`, `type [4] "Please resend invoice 42"`)},
			calltypes.Action{Kind: "click", Index: 5}},
		{"form sent: done", calltypes.PickInput{Goal: formGoal, Page: thanksPage,
			History: history(`select [3] "Billing"`, `type [4] "Please resend invoice 42"`, "click [5]")},
			calltypes.Action{Kind: "done", Index: -1}},
		{"disabled elements are skipped", calltypes.PickInput{Goal: searchGoal, Page: testPage{
			Elements: []calltypes.Element{
				{Index: 0, Role: "searchbox", Type: "search", Name: "Search", Disabled: true},
				{Index: 1, Role: "link", Name: "Blue widget sale", Href: "/sale"},
			}}.page()},
			calltypes.Action{Kind: "click", Index: 1}},
		{"nothing matches: look further", calltypes.PickInput{Goal: searchGoal, Page: testPage{
			Elements: []calltypes.Element{{Index: 0, Role: "link", Name: "Imprint", Href: "/imprint"}}}.page()},
			calltypes.Action{Kind: "scroll", Index: -1, Text: "down"}},
		{"nothing matches after scrolling: give up", calltypes.PickInput{Goal: searchGoal, History: history("scroll down"),
			Page: testPage{Elements: []calltypes.Element{{Index: 0, Role: "link", Name: "Imprint", Href: "/imprint"}}}.page()},
			calltypes.Action{Kind: "done", Index: -1}},
		{"plan step decides between matches", calltypes.PickInput{Goal: "Open the blue widget reviews",
			Plan: []string{"Open the widget page", "Read the reviews"}, Step: 1, Page: testPage{
				Elements: []calltypes.Element{
					{Index: 0, Role: "link", Name: "Blue widget", Href: "/item/17"},
					{Index: 1, Role: "link", Name: "Widget reviews", Href: "/item/17/reviews"},
				}}.page()},
			calltypes.Action{Kind: "click", Index: 1}},
		{"ties go to the lower index", calltypes.PickInput{Goal: "Open the widget", Page: testPage{
			Elements: []calltypes.Element{
				{Index: 9, Role: "link", Name: "Widget B"},
				{Index: 4, Role: "link", Name: "Widget A"},
			}}.page()},
			calltypes.Action{Kind: "click", Index: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, callClickPick, tc.in)
			got := validate(t, callClickPick, out).(calltypes.Action)
			got.Reason = ""
			if got != tc.want {
				t.Errorf("got %s\nwant %+v", out, tc.want)
			}
		})
	}
}

// The rules can carry an agent through both recorded tasks end to end.
func TestHeuristicPickWalksTheForm(t *testing.T) {
	var hist []calltypes.Taken
	page := formPage(0)
	for range 8 {
		a := validate(t, callClickPick, ask(t, callClickPick, calltypes.PickInput{Goal: formGoal, Page: page, History: hist})).(calltypes.Action)
		if a.Kind == calltypes.ActDone {
			if page.Title != thanksPage.Title {
				t.Fatalf("done on %q: %s", page.Title, a.Reason)
			}
			if !strings.Contains(a.Reason, "Ada Lovelace") {
				t.Errorf("reason %q", a.Reason)
			}
			return
		}
		hist = append(hist, calltypes.Taken{Action: a})
		switch a.Kind {
		case calltypes.ActType, calltypes.ActSelect:
			page = setValue(page, a.Index, a.Text)
		case calltypes.ActClick:
			if a.Index != 5 {
				t.Fatalf("clicked %d", a.Index)
			}
			page = thanksPage
		default:
			t.Fatalf("unexpected %+v", a)
		}
	}
	t.Fatalf("not done after %v", hist)
}

func TestHeuristicPickReasonNamesTheElement(t *testing.T) {
	out := ask(t, callClickPick, calltypes.PickInput{Goal: searchGoal, Page: searchPage})
	a := validate(t, callClickPick, out).(calltypes.Action)
	if !strings.Contains(a.Reason, `"Search products"`) || !strings.Contains(a.Reason, "search box") {
		t.Errorf("reason %q", a.Reason)
	}
	out = ask(t, callClickPick, calltypes.PickInput{Goal: searchGoal, Page: resultsPage, History: history("click [3]")})
	if a := validate(t, callClickPick, out).(calltypes.Action); a.Reason != `the link "Blue Widget" best matches the goal` {
		t.Errorf("reason %q", a.Reason)
	}
}

func TestHeuristicCheck(t *testing.T) {
	const didIt = "Did the last action achieve what it meant to?"
	museum := func(text string) calltypes.Page {
		return testPage{URL: "https://museum.example/", Title: "Museum of Toys", Text: text}.page()
	}
	for _, tc := range []struct {
		name string
		in   calltypes.CheckInput
		want bool
		why  string // in the reason
	}{
		{"typed text is in the box", calltypes.CheckInput{Question: didIt, Goal: searchGoal, LastAction: took(`type [2] "blue widget"`),
			Page: testPage{Title: searchPage.Title, Elements: withValue(shopNav, 2, "blue widget")}.page()}, true, `"blue widget"`},
		{"typing did not stick", calltypes.CheckInput{Question: didIt, Goal: searchGoal, LastAction: took(`type [2] "blue widget"`),
			Page: searchPage}, false, `lacks "blue widget"`},
		{"goal met on the detail page", calltypes.CheckInput{Question: "Is the goal met?", Goal: searchGoal, Page: detailPage}, true, "blue widget"},
		{"question's own words", calltypes.CheckInput{Question: "Does the page show the price?", Goal: searchGoal, Page: detailPage}, true, "price"},
		{"question's words missing", calltypes.CheckInput{Question: "Does the page show customer reviews?", Goal: searchGoal, Page: detailPage}, false, "missing customer, review"},
		{"question quotes its value", calltypes.CheckInput{Question: `Is "Red Widget" listed?`, Goal: searchGoal, Page: resultsPage}, true, "Red Widget"},
		{"question quotes a missing value", calltypes.CheckInput{Question: `Is "Green Widget" listed?`, Goal: searchGoal, Page: resultsPage}, false, "Green Widget"},
		{"form sent", calltypes.CheckInput{Question: "Is the goal met?", Goal: formGoal, Page: thanksPage}, true, "Ada Lovelace"},
		{"form not sent", calltypes.CheckInput{Question: "Is the goal met?", Goal: formGoal, Page: formPage(0)}, false, "Ada Lovelace"},
		{"60% of the goal's key words", calltypes.CheckInput{Question: "Is the goal met?", Goal: "Find the opening hours and phone number of the museum",
			Page: museum("Museum of Toys. Opening hours: 9–17 daily.")}, true, "3 of 5"},
		{"under 60%", calltypes.CheckInput{Question: "Is the goal met?", Goal: "Find the opening hours and phone number of the museum",
			Page: museum("Museum of Toys. Closed for renovation.")}, false, "missing opening, hour, phone"},
		{"nothing to look for", calltypes.CheckInput{Question: "Is the goal met?", Page: detailPage}, false, "nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, callYesNo, tc.in)
			v := validate(t, callYesNo, out).(calltypes.Verdict)
			if v.Answer != tc.want || !strings.Contains(v.Reason, tc.why) {
				t.Errorf("got %s, want %v and a reason with %q", out, tc.want, tc.why)
			}
		})
	}
}

func TestHeuristicSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   calltypes.SummaryInput
		want string
	}{
		{"price of the quoted item", calltypes.SummaryInput{Goal: `What is the price of the "Blue Widget"?`, Page: detailPage},
			"Price: $12.00."},
		{"the asked-for words weigh most", calltypes.SummaryInput{Goal: `In how many days does the "Blue Widget" ship?`, Page: detailPage},
			"Ships in 2 days."},
		{"notes count", calltypes.SummaryInput{Goal: "List the museum's opening hours",
			Page:  testPage{Title: "Tickets", Text: "Tickets cost 8 euros."}.page(),
			Notes: []string{"Opening hours: 9-17 daily. Closed on Mondays."}},
			"Opening hours: 9-17 daily."},
		{"nothing matches: the title", calltypes.SummaryInput{Goal: "What is the weather in Oslo?", Page: detailPage},
			"Blue Widget – Example Shop"},
		{"nothing matches, no title", calltypes.SummaryInput{Goal: "What is the weather in Oslo?", Page: testPage{Text: "Hello."}.page()},
			"nothing on the page matches the goal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, callSummarize, tc.in)
			if s := validate(t, callSummarize, out).(calltypes.Summary); s.Answer != tc.want {
				t.Errorf("got %q\nwant %q", s.Answer, tc.want)
			}
		})
	}
}

func TestHeuristicSummarizeIsShort(t *testing.T) {
	text := strings.Repeat("The blue widget is sturdy and cheap. ", 100)
	out := ask(t, callSummarize, calltypes.SummaryInput{Goal: "Is the blue widget sturdy?", Page: testPage{Text: text + strings.Repeat("widget ", 200) + "."}.page()})
	s := validate(t, callSummarize, out).(calltypes.Summary)
	if s.Answer != "The blue widget is sturdy and cheap." {
		t.Errorf("got %q", s.Answer)
	}
}

func TestHeuristicPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any // a PlanInput, or a plain string sent as is
		want []string
	}{
		{"then", calltypes.PlanInput{Goal: searchGoal, Page: searchPage},
			[]string{`Search for "blue widget"`, "Open its details page"}},
		{"and before a verb", calltypes.PlanInput{Goal: "search for blue widget and open the first result"},
			[]string{"Search for blue widget", "Open the first result"}},
		{"and between nouns", calltypes.PlanInput{Goal: "Buy black and white socks."},
			[]string{"Buy black and white socks"}},
		{"the form", calltypes.PlanInput{Goal: formGoal, Page: formPage(0)},
			[]string{`Fill in the contact form: name "Ada Lovelace"`, `Email "ada@example.com"`, "Topic Billing",
				`Message "Please resend invoice 42"`, "Submit it"}},
		{"quotes stay whole", calltypes.PlanInput{Goal: `Search for "salt, pepper and oil". Then add it to the cart.`},
			[]string{`Search for "salt, pepper and oil"`, "Add it to the cart"}},
		{"at most five steps", calltypes.PlanInput{Goal: "open a, then b, then c, then d, then e, then f, then g"},
			[]string{"Open a", "B", "C", "D", "E, F, G"}},
		{"short steps", calltypes.PlanInput{Goal: "Find " + strings.Repeat("a very long description ", 10) + "and report"},
			[]string{"Find a very long description a very long description a very long description a very long", "Report"}},
		{"empty goal", calltypes.PlanInput{}, []string{"Read the page and work toward the goal"}},
		{"a goal sent as plain text", "Open the news page; read the top story", []string{"Open the news page", "Read the top story"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, callPlanning, tc.in)
			if p := validate(t, callPlanning, out).(calltypes.Plan); !slices.Equal(p.Steps, tc.want) {
				t.Errorf("got %q\nwant %q", p.Steps, tc.want)
			}
		})
	}
}

// Input that is not the type's input gets a cautious answer, still valid.
func TestHeuristicGarbage(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
	}{
		{callPlanning, `{"goal": 7}`, `{"steps":["Read the page and work toward the goal"]}`},
		{callClickPick, `{"goal": "x", "page": [`, `{"action":"done","index":-1,"text":"","submit":false,"reason":"could not read the page"}`},
		{callYesNo, "<html>not json</html>", `{"answer":false,"reason":"could not read the page"}`},
		{callSummarize, `[1, 2, 3]`, `{"answer":"could not read the page"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, tc.name, tc.msg)
			validate(t, tc.name, out)
			if out != tc.want {
				t.Errorf("got %s\nwant %s", out, tc.want)
			}
		})
	}
}

// Prompts that wrap the input in words or a code fence are read all the same.
func TestHeuristicWrappedInput(t *testing.T) {
	b, _ := json.Marshal(calltypes.PickInput{Goal: searchGoal, Page: searchPage})
	out := ask(t, callClickPick, "Here is the page:\n```json\n"+string(b)+"\n```")
	if a := validate(t, callClickPick, out).(calltypes.Action); a.Kind != "type" || a.Index != 2 {
		t.Errorf("got %s", out)
	}
}

// Calls of other types, or without a schema, are echoed.
func TestHeuristicOtherCallsEcho(t *testing.T) {
	for _, format := range []string{"", `{"type":"json_object"}`, `{"type":"json_schema","json_schema":{"name":"extract-table"}}`, `"text"`} {
		r := azuresim.Request{ResponseFormat: json.RawMessage(format), Messages: []tokens.Message{{Role: "user", Content: "click #37"}}}
		if got := (Model{}).Reply(r); got != "click #37" {
			t.Errorf("format %s: got %q", format, got)
		}
	}
}

// The Responses API names the schema at the top of its text format.
func TestHeuristicResponsesFormat(t *testing.T) {
	in, _ := json.Marshal(calltypes.CheckInput{Question: `Is "Red Widget" listed?`, Page: resultsPage})
	out := Model{}.Reply(azuresim.Request{ResponseFormat: json.RawMessage(`{"type":"json_schema","name":"yes-no","strict":true}`),
		Messages: []tokens.Message{{Role: "user", Content: string(in)}}})
	if v := validate(t, callYesNo, out).(calltypes.Verdict); !v.Answer {
		t.Errorf("got %s", out)
	}
}

// An answer is shortened to fit the call's cap rather than cut by it.
func TestHeuristicFitsTheCap(t *testing.T) {
	in, _ := json.Marshal(calltypes.CheckInput{Question: "Is the goal met?", Goal: "Find the opening hours and phone number of the museum",
		Page: testPage{Title: "Museum of Toys", Text: "Closed."}.page()})
	in2, _ := json.Marshal(calltypes.SummaryInput{Goal: "Is the blue widget sturdy?", Page: detailPage})
	in3, _ := json.Marshal(calltypes.PlanInput{Goal: formGoal})
	for _, tc := range []struct {
		name string
		msg  []byte
		cap  int64
	}{
		{callYesNo, in, 12},
		{callSummarize, in2, 10},
		{callPlanning, in3, 20},
	} {
		out := Model{}.Reply(azuresim.Request{ResponseFormat: schemaFormat(tc.name), MaxTokens: tc.cap,
			Messages: []tokens.Message{{Role: "user", Content: string(tc.msg)}}})
		validate(t, tc.name, out)
		if n := tokens.Count(out); n > int(tc.cap) {
			t.Errorf("%s: %d tokens over a cap of %d: %s", tc.name, n, tc.cap, out)
		}
	}
}

// A deployment set to reply "heuristic", with the model registered under
// that name, answers a click-pick call over HTTP.
func TestHeuristicOverHTTP(t *testing.T) {
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{Name: "agent", Model: "gpt-4o", TPM: 1_000_000, Reply: "heuristic"}}},
		azuresim.Options{Models: map[string]azuresim.Model{"heuristic": Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim.Handler())
	t.Cleanup(ts.Close)
	in, _ := json.Marshal(calltypes.PickInput{Goal: searchGoal, Page: resultsPage, History: history(`type [2] "blue widget"`, "click [3]")})
	body, _ := json.Marshal(map[string]any{
		"messages": []map[string]string{
			{"role": "system", "content": "Pick the next action. Answer with JSON."},
			{"role": "user", "content": string(in)},
		},
		"max_tokens":      120,
		"response_format": schemaFormat(callClickPick),
	})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/openai/deployments/agent/chat/completions?api-version=2024-10-21", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("api-key", "test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || len(r.Choices) != 1 {
		t.Fatalf("status %d, %v: %+v", resp.StatusCode, err, r)
	}
	content := r.Choices[0].Message.Content
	a := validate(t, callClickPick, content).(calltypes.Action)
	if a.Kind != "click" || a.Index != 4 || r.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %s, finish %v", content, r.Choices[0].FinishReason)
	}
}

// Any user message, any of the four types: no panic, and an answer that
// parses strictly as the type's answer.
func FuzzHeuristic(f *testing.F) {
	seeds := []any{
		calltypes.PlanInput{Goal: formGoal},
		calltypes.PickInput{Goal: searchGoal, Page: resultsPage, History: history("click [3]", `type [2] "x"`)},
		calltypes.PickInput{Goal: formGoal, Page: formPage(2)},
		calltypes.CheckInput{Question: `Is "x" shown?`, Goal: searchGoal, Page: detailPage},
		calltypes.SummaryInput{Goal: "price?", Page: detailPage, Notes: []string{"a. b! c?"}},
	}
	for i, s := range seeds {
		b, _ := json.Marshal(s)
		f.Add(string(b), uint8(i), uint16(0))
	}
	f.Add(`{"goal":"'\"“‘","page":{"elements":[{"index":-5,"tag":"select"}]}}`, uint8(1), uint16(3))
	f.Add("\xff\xfe then , and open", uint8(0), uint16(1))
	f.Add("", uint8(3), uint16(0))
	names := []string{callPlanning, callClickPick, callYesNo, callSummarize}
	f.Fuzz(func(t *testing.T, msg string, kind uint8, limit uint16) {
		name := names[int(kind)%len(names)]
		out := Model{}.Reply(azuresim.Request{
			ResponseFormat: schemaFormat(name), MaxTokens: int64(limit),
			Messages: []tokens.Message{{Role: "user", Content: msg}},
		})
		v := validate(t, name, out)
		if a, ok := v.(calltypes.Action); ok && limit == 0 && a.Reason == "" {
			t.Fatalf("no reason: %s", out)
		}
	})
}

// history reads steps taken from their written form.
func history(lines ...string) []calltypes.Taken {
	var out []calltypes.Taken
	for _, l := range lines {
		out = append(out, *took(l))
	}
	return out
}

func took(line string) *calltypes.Taken {
	t, err := calltypes.ParseTaken(line)
	if err != nil {
		panic(err)
	}
	return &t
}

// A goal that ends in a deed: open a product, choose, press.
const cartGoal = `Open the Oak desk, set the quantity to 2 and add it to the cart.`

var itemPage = testPage{
	URL: "https://shop.example/item/2", Title: "Oak desk – Example Shop",
	Elements: []calltypes.Element{
		{Index: 0, Role: "link", Name: "Home", Href: "/"},
		{Index: 1, Role: "combobox", Name: "Quantity", Value: "1"},
		{Index: 2, Role: "button", Name: "Add to cart"},
	},
	Text: "Oak desk. 890 EUR. Electric lift. Quantity 1 2 3. Add to cart",
}.page()

func TestHeuristicPickSendsATypedSearch(t *testing.T) {
	page := testPage{Elements: []calltypes.Element{
		{Index: 0, Role: "link", Name: "Blue widgets", Href: "/c/blue-widgets"},
		{Index: 1, Type: "search", Role: "searchbox", Name: "Search the catalogue", Value: "blue widget"},
		{Index: 2, Role: "button", Name: "Go"},
	}}.page()
	in := calltypes.PickInput{Goal: searchGoal, Page: page, History: []calltypes.Taken{
		{Action: calltypes.Action{Kind: "type", Index: 1, Text: "blue widget"}, Element: `searchbox "Search the catalogue"`, Outcome: "changed"}}}
	if a := validate(t, callClickPick, ask(t, callClickPick, in)).(calltypes.Action); a.Kind != "click" || a.Index != 2 {
		t.Errorf("got %+v, want click [2]: the box's own button, not the link that matches", a)
	}
}

func TestHeuristicPickOpensAResultOverTheSearchButton(t *testing.T) {
	in := calltypes.PickInput{Goal: `Search for "desk", sort by "Price, high to low" and open the first one`,
		History: history(`type [1] "desk" and submit`, `select [3] "Price, high to low"`),
		Page: testPage{Elements: []calltypes.Element{
			{Index: 0, Role: "link", Name: "Home", Href: "/"},
			{Index: 1, Type: "search", Role: "searchbox", Name: "Search", Value: "desk"},
			{Index: 2, Role: "button", Name: "Search"},
			{Index: 3, Role: "combobox", Name: "Sort by", Value: "Price, high to low"},
			{Index: 4, Role: "link", Name: "Oak standing desk", Href: "/item/2"},
			{Index: 5, Role: "link", Name: "Walnut writing desk", Href: "/item/1"},
		}}.page()}
	if a := validate(t, callClickPick, ask(t, callClickPick, in)).(calltypes.Action); a.Kind != "click" || a.Index != 4 {
		t.Errorf("got %+v, want click [4]", a)
	}
}

func TestHeuristicPickFillsNamedFieldsBeforeClicking(t *testing.T) {
	const goal = `Sign up as "Ada", set the country to Norway, accept the terms and create the account.`
	in := calltypes.PickInput{Goal: goal, Plan: plan(goal).Steps, Step: 2, History: history(`type [0] "Ada"`),
		Page: testPage{Elements: []calltypes.Element{
			{Index: 0, Type: "text", Role: "textbox", Name: "Full name", Value: "Ada"},
			{Index: 1, Role: "combobox", Name: "Country", Value: "Choose one", Options: []string{"Choose one", "Norway", "Japan"}},
			{Index: 2, Type: "checkbox", Role: "checkbox", Name: "I accept the terms"},
			{Index: 3, Role: "button", Name: "Create account", Disabled: true},
		}}.page()}
	if a := validate(t, callClickPick, ask(t, callClickPick, in)).(calltypes.Action); a.Kind != "select" || a.Index != 1 || a.Text != "Norway" {
		t.Errorf("got %+v, want select [1] \"Norway\" before the plan step's checkbox", a)
	}
}

// A page that already shows every word of the goal is not the goal met
// while the goal's last deed is still to do, and is once it was done.
func TestHeuristicDeedStillToDo(t *testing.T) {
	opened := calltypes.Taken{Action: calltypes.Action{Kind: "click", Index: 4}, Element: `link "Oak desk"`, Outcome: "navigated to /item/2"}
	added := calltypes.Taken{Action: calltypes.Action{Kind: "click", Index: 2}, Element: `button "Add to cart"`, Outcome: "changed"}
	const q = "Does the page now show that the goal is met?"
	if v := check(calltypes.CheckInput{Question: q, Goal: cartGoal, LastAction: &opened, Page: itemPage}); v.Answer || !strings.Contains(v.Reason, "still to do") {
		t.Errorf("after opening: %+v", v)
	}
	if v := check(calltypes.CheckInput{Question: q, Goal: cartGoal, LastAction: &added, Page: itemPage}); !v.Answer {
		t.Errorf("after adding: %+v", v)
	}
	a := pick(calltypes.PickInput{Goal: cartGoal, Page: itemPage, History: []calltypes.Taken{opened}}, nil)
	if a.Kind == "done" {
		t.Errorf("done before adding: %+v", a)
	}
	if a := pick(calltypes.PickInput{Goal: cartGoal, Page: itemPage, History: []calltypes.Taken{opened, added}}, nil); a.Kind != "done" {
		t.Errorf("not done after adding: %+v", a)
	}
}

func TestHeuristicSummarizeAnswersTheLastStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   calltypes.SummaryInput
		want string
	}{
		{"a price is an amount", calltypes.SummaryInput{Goal: `Search for "desk", open the first one and report its price.`, Page: itemPage},
			"890 EUR."},
		{"the last step's words alone", calltypes.SummaryInput{Goal: "Accept the terms, create the account and report what is required.",
			Page: testPage{Text: "I accept the terms\nCreate account\nFull name is required."}.page()},
			"Full name is required."},
		{"the page over the notes", calltypes.SummaryInput{Goal: `Create an account with the email "ada@example.com"`,
			Page:  testPage{Text: "Welcome, Ada. Your account is ready."}.page(),
			Notes: []string{`type textbox "Email" → changed`}},
			"Welcome, Ada. Your account is ready."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ask(t, callSummarize, tc.in)
			if s := validate(t, callSummarize, out).(calltypes.Summary); s.Answer != tc.want {
				t.Errorf("got %q\nwant %q", s.Answer, tc.want)
			}
		})
	}
}
