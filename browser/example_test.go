package browser_test

import (
	"context"
	"fmt"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// An agent's step: observe the page, pick elements by index, and act.
func Example() {
	site, err := testsite.Start("")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer site.Close()
	ctx := context.Background()
	p, err := browser.Open(ctx, browser.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	if _, err := p.Do(ctx, browser.Navigate(site.URL+"/form/index.html")); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := p.Observe(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(snap.Title)
	for _, e := range snap.Elements[:3] {
		fmt.Println(e.Line(80))
	}
	// What a model would answer with: an index from this snapshot.
	named := func(name string) browser.Target {
		for _, e := range snap.Elements {
			if e.Name == name {
				return snap.Index(e.Index)
			}
		}
		return nil
	}
	for _, a := range []browser.Action{
		browser.TypeInto(named("Full name"), "Ada Lovelace", false),
		browser.Click(named("I accept the terms")),
		browser.Click(named("Create account")).Expecting("Email must look like name@example.com."),
	} {
		out, err := p.Do(ctx, a)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", a, out)
	}
	// A selector, as a scripted step would use, reads what the form said.
	errs, err := p.Extract(ctx, browser.CSS("#errors"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(errs)
	// Output:
	// Join the club
	// [0] textbox "Full name" <input type=text>
	// [1] textbox "Email" <input type=email placeholder="you@example.com">
	// [2] textbox "Password" <input type=password>
	// type "Ada Lovelace" into [0]: changed
	// click [7]: changed
	// click [8], then expect "Email must look like name@example.com.": changed
	// Email must look like name@example.com.
	// Password needs at least 8 characters.
	// Choose a country.
}
