package browser

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestActionsReadLikeWhatAPersonDoes(t *testing.T) {
	snap := &Snapshot{}
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Click(snap.Index(3)), "click [3]"},
		{TypeInto(CSS("#q"), "oak", true), `type "oak" into css "#q" and submit`},
		{SelectOption(snap.Index(4), "Norway"), `select "Norway" in [4]`},
		{Navigate("/search?q=oak"), "navigate to /search?q=oak"},
		{ScrollBy("down"), "scroll down"},
		{ScrollTo(XPath("//h2")), `scroll to xpath "//h2"`},
		{Press("Enter"), "press Enter"},
		{Back(), "go back"},
		{Wait(WaitNetworkQuiet), "wait for network"},
		{Pause(250 * time.Millisecond), "wait for 250ms"},
		{SaveScreenshot("shots/cart.png"), "screenshot shots/cart.png"},
		{Expect("In stock"), `expect "In stock"`},
		{Click(CSS("#go")).Expecting("Thanks"), `click css "#go", then expect "Thanks"`},
		{Click(nil), "click nothing"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%#v reads %q, want %q", c.a, got, c.want)
		}
	}
	// Said in logs and errors, so no secret in it.
	if s := Navigate("/login?token=SECRET7").String(); strings.Contains(s, "SECRET7") {
		t.Errorf("the URL's token reached %q", s)
	}
}

func TestAStepIsAnAction(t *testing.T) {
	steps, err := ParseSteps("s.yaml", []byte(`
- click: "#go"
  expect: Thanks
- type: "//input[1]"
  text: oak
  submit: true
- select: "#sort"
  option: Price
- navigate: /search
- scroll: up
- scroll: "#reviews"
- press: Tab
- back: true
- wait: dom
- wait: 2s
- screenshot: after.png
- expect: In stock
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		Click(CSS("#go")).Expecting("Thanks"),
		TypeInto(XPath("//input[1]"), "oak", true),
		SelectOption(CSS("#sort"), "Price"),
		Navigate("/search"),
		ScrollBy("up"),
		ScrollTo(CSS("#reviews")),
		Press("Tab"),
		Back(),
		Wait(WaitDOMStable),
		Pause(2 * time.Second),
		SaveScreenshot(filepath.Join("shots", "after.png")),
		Expect("In stock"),
	}
	got := Actions(steps, "shots")
	if len(got) != len(want) {
		t.Fatalf("%d actions from %d steps", len(got), len(steps))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("step %d (%s) is %#v, want %#v", i+1, steps[i], got[i], want[i])
		}
	}
	if s := steps[5].String(); s != "scroll to #reviews" {
		t.Errorf("a step names its selector as written: %q", s)
	}
}

func TestDoRefusesWhatItCannotTake(t *testing.T) {
	// None reaches the browser, so a Page that never opened will do.
	p := new(Page)
	ctx := context.Background()
	for _, c := range []struct {
		a    Action
		want string
		kind error
	}{
		{Action{Kind: "swipe", Target: CSS("a")}, "browser: swipe: not an action the page can take: unknown action", ErrNoAction},
		{Action{}, "browser: do: not an action the page can take: the action has no kind", ErrNoAction},
		{Action{Kind: KindScreenshot}, "browser: screenshot: not an action the page can take: no file to write", ErrNoAction},
		{Click(nil), "browser: click: no element matches: no element named", ErrNotFound},
		{TypeInto(nil, "x", false), "browser: type: no element matches: no element named", ErrNotFound},
	} {
		_, err := p.Do(ctx, c.a)
		var be *Error
		if !errors.Is(err, c.kind) || !errors.As(err, &be) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Do(%s) = %v, want %q", c.a, err, c.want)
		}
	}
}

// TestExpectReadsThePageAgain: text a page shows a moment after the step
// (a script's, a late redirect's) passes an expect; text it never shows
// fails it, within a bound.
func TestExpectReadsThePageAgain(t *testing.T) {
	p, ctx := openAt(t, "/orders/reports.html")
	if _, err := chromedp.Run(p.tab().ctx, chromedp.Evaluate[bool](`setTimeout(() => document.body.append('Report ready.'), 800), true`)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(ctx, Action{Expect: "Report ready."}); err != nil {
		t.Errorf("text shown 0.8 s later: %v", err)
	}
	start := time.Now()
	_, err := p.Do(ctx, Action{Expect: "Report failed."})
	if !errors.Is(err, ErrNotFound) || time.Since(start) > expectWait+5*time.Second {
		t.Errorf("text never shown: %v after %v", err, time.Since(start))
	}
}
