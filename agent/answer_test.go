package agent

import (
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
)

// page is a snapshot of words: a heading, then lines; a line starting
// "- " is an item of one list.
func page(heading string, lines ...string) *browser.Snapshot {
	s := &browser.Snapshot{Blocks: []browser.Block{{Text: heading, Heading: 1, Element: -1}}, Text: heading}
	item := 0
	for _, l := range lines {
		b := browser.Block{Text: l, Element: -1}
		if len(l) > 2 && l[:2] == "- " {
			item++
			b.Text, b.List, b.Item = l[2:], 1, item
		}
		s.Blocks = append(s.Blocks, b)
		s.Text += "\n" + b.Text
	}
	return s
}

func reader(goal string, ps params) *learning {
	return &learning{ps: ps, tmpl: &Task{Goal: goal}}
}

func TestAnAnswerCopiedFromThePageIsReadThereNextTime(t *testing.T) {
	l := reader("Report how many members there are and how many are online.", nil)
	a := l.answerOf(page("Community", "Welcome to the feed", "12 members, 3 online"), "There are 12 members, 3 online")
	if a == nil {
		t.Fatal("nothing learned of an answer copied from a line")
	}
	if got := a.String(); got != `There are [line 2 under "community", like "# members, # online"]` {
		t.Errorf("learned %s", got)
	}
	got, why := l.readAnswer(page("Community", "Welcome to the feed", "14 members, 5 online"), a)
	if why != "" || got != "There are 14 members, 5 online" {
		t.Errorf("read %q (%s)", got, why)
	}
	for name, p := range map[string]*browser.Snapshot{
		"other words":       page("Community", "Welcome to the feed", "14 members, 5 away"),
		"another place":     page("Community", "14 members, 5 online"),
		"under another one": page("Team", "Welcome to the feed", "14 members, 5 online"),
	} {
		if got, why := l.readAnswer(p, a); why == "" {
			t.Errorf("%s: read %q", name, got)
		}
	}
}

func TestAnAnswerWithWordsOfItsOwnIsNotLearned(t *testing.T) {
	p := page("Invoices", "- INV-1042 · Acme GmbH · 120 EUR", "- INV-1043 · Borealis AB · 75 EUR", "Paid this month: 2")
	l := reader("Report the open invoices.", nil)
	for _, answer := range []string{
		"There are 2 open invoices.",                        // a figure of its own
		"Two: INV-1042 · Acme GmbH · 120 EUR and one more.", // a count in words
		"Acme GmbH owes 120 EUR.",                           // the page's words outside a whole line
		"No.",                                               // a yes or no
		"Nothing on this page says how many invoices remain", // no line at all
	} {
		if a := l.answerOf(p, answer); a != nil {
			t.Errorf("%q learned as %s", answer, a)
		}
	}
	if a := l.answerOf(p, "Open invoices: INV-1042 · Acme GmbH · 120 EUR; INV-1043 · Borealis AB · 75 EUR."); a == nil {
		t.Error("an answer of two whole lines was not learned")
	}
}

func TestAListThatGrewIsNotReadAsLearned(t *testing.T) {
	l := reader("Report the open invoices.", nil)
	learnedOn := page("Invoices", "- INV-1042 · 120 EUR", "- INV-1043 · 75 EUR")
	a := l.answerOf(learnedOn, "INV-1042 · 120 EUR\nINV-1043 · 75 EUR")
	if a == nil {
		t.Fatal("not learned")
	}
	if got, why := l.readAnswer(page("Invoices", "- INV-1050 · 12 EUR", "- INV-1051 · 7 EUR"), a); why != "" || got != "INV-1050 · 12 EUR\nINV-1051 · 7 EUR" {
		t.Errorf("a list as long: read %q (%s)", got, why)
	}
	if got, why := l.readAnswer(page("Invoices", "- INV-1050 · 12 EUR", "- INV-1051 · 7 EUR", "- INV-1052 · 9 EUR"), a); why == "" {
		t.Errorf("a list that grew read as %q: a row would be left out", got)
	}
}

func TestALineHoldingAParameterIsFoundByIt(t *testing.T) {
	learnedOn := page("Invoices", "- INV-1042 · Acme GmbH · 120 EUR", "- INV-1043 · Borealis AB · 75 EUR", "- INV-1044 · Cobalt SA · 310 EUR")
	l := reader("Report who invoice {{invoice}} is from and what it is for.", params{"invoice": "INV-1042"})
	a := l.answerOf(learnedOn, "Invoice INV-1042: INV-1042 · Acme GmbH · 120 EUR")
	if a == nil {
		t.Fatal("not learned")
	}
	if got := a.String(); got != `Invoice {{invoice}}: [line 1 under "invoices" in a list of 3, like "{{invoice}} · acme gmbh · # eur"]` {
		t.Errorf("learned %s", got)
	}
	reversed := page("Invoices", "- INV-1044 · Cobalt SA · 310 EUR", "- INV-1043 · Borealis AB · 75 EUR", "- INV-1042 · Acme GmbH · 120 EUR", "- INV-1045 · Dune Ltd · 42 EUR")
	next := reader(l.tmpl.Goal, params{"invoice": "INV-1043"})
	if got, why := next.readAnswer(reversed, a); why != "" || got != "Invoice INV-1043: INV-1043 · Borealis AB · 75 EUR" {
		t.Errorf("another row: read %q (%s)", got, why)
	}
	gone := reader(l.tmpl.Goal, params{"invoice": "INV-1049"})
	if got, why := gone.readAnswer(reversed, a); why == "" {
		t.Errorf("a row that is not there read as %q", got)
	}
	if got, why := reader(l.tmpl.Goal, nil).readAnswer(reversed, a); why == "" {
		t.Errorf("a run without the parameter read %q", got)
	}
}

func TestALearnedAnswerHoldsNoParameterValueInAnyCase(t *testing.T) {
	l := reader("Report what {{client}} owes.", params{"client": "Borealis"})
	p := page("Invoices", "- INV-1042 · Acme GmbH · 120 EUR", "- INV-1043 · BOREALIS AB · 75 EUR")
	a := l.answerOf(p, "INV-1043 · BOREALIS AB · 75 EUR")
	if a == nil || strings.Contains(strings.ToLower(a.String()), "borealis") {
		t.Errorf("learned %v", a)
	}
	if a := l.answerOf(p, "borealis: INV-1043 · BOREALIS AB · 75 EUR"); a != nil {
		t.Errorf("the summary's own words kept a value: %s", a)
	}
}

func TestALearnedAnswerChecksItsParts(t *testing.T) {
	line := &learned.Line{At: 1, Shape: "# members"}
	for _, a := range []learned.Answer{
		{},
		{Parts: []learned.Part{{Words: "only words"}}},
		{Parts: []learned.Part{{Words: "both", Line: line}}},
		{Parts: []learned.Part{{Line: &learned.Line{At: 0, Shape: "x"}}}},
		{Parts: []learned.Part{{Line: &learned.Line{At: 1}}}},
	} {
		e := &learned.Entry{Format: learned.Format, Key: "t-0123456789abcdef", Goals: []learned.Goal{{Steps: []learned.Step{}}}, Answer: &a}
		if err := e.Check(); err == nil {
			t.Errorf("answer %+v passed its check", a)
		}
	}
}

// Whatever a summary answers, learning where it was read never fails
// but by learning nothing, and what it learns reads the same answer back
// from the same page.
func FuzzAnswerOf(f *testing.F) {
	p := page("Invoices", "- INV-1042 · Acme GmbH · 120 EUR", "- INV-1043 · Borealis AB · 75 EUR", "Paid this month: 2", "Pay")
	for _, s := range []string{"INV-1042 · Acme GmbH · 120 EUR", "Open: INV-1043 · Borealis AB · 75 EUR\nPaid this month: 2", "Pay Pay Pay", "", "{{invoice}} INV-1042", "[line 1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		l := reader("Report the open invoices of {{invoice}}.", params{"invoice": "INV-1042"})
		a := l.answerOf(p, answer)
		if a == nil {
			return
		}
		e := &learned.Entry{Format: learned.Format, Key: "t-0123456789abcdef", Goals: []learned.Goal{{Steps: []learned.Step{}}}, Answer: a}
		if err := e.Check(); err != nil {
			t.Fatalf("%q learned as %s, which does not check: %v", answer, a, err)
		}
		if got, why := l.readAnswer(p, a); why != "" || got != answer {
			t.Fatalf("%q learned as %s reads back %q (%s)", answer, a, got, why)
		}
	})
}

// An answer copied from a downloaded file's line is read in the file the
// next run downloads, by the file's name and the line's place.
func TestAnAnswerReadInADownloadedFileIsReadThereNextTime(t *testing.T) {
	l := reader("Download the orders report and report how many orders there were in December.", nil)
	withFile := func(text string) *browser.Snapshot {
		s := page("Reports", "Orders and revenue by month, as a spreadsheet.")
		s.Downloads = []browser.Download{{Name: "orders-report.csv", Saved: true, Text: text}}
		return s
	}
	a := l.answerOf(withFile("month,orders\nNovember,395\nDecember,412\n"), "December,412")
	if a == nil {
		t.Fatal("nothing learned of an answer copied from a file's line")
	}
	got, why := l.readAnswer(withFile("month,orders\nNovember,401\nDecember,433\n"), a)
	if why != "" || got != "December,433" {
		t.Errorf("read %q (%s), want the line of the new file", got, why)
	}
	if got, why := l.readAnswer(page("Reports", "Orders and revenue by month, as a spreadsheet."), a); why == "" {
		t.Errorf("with no file downloaded the answer was read: %q", got)
	}
}
