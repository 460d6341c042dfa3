package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// One agent on one task: a page to act on and a caller to think with,
// both opened by the program and closed by it. Here the caller is the
// embedded default (the simulator's word-matching stand-in for a model, in
// this process); with a config it is llm.Open on real deployments.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<title>Oak & Iron</title><h1>Oak & Iron</h1><a href="/hours">Opening hours</a> <a href="/jobs">Jobs</a>`)
		case "/hours":
			fmt.Fprint(w, `<title>Visit us</title><h1>Visit us</h1><p>Opening hours: Monday to Friday, 9:00 to 17:00.</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	ctx := context.Background()
	page, err := browser.Open(ctx, browser.Options{AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer page.Close()
	caller, err := embedded.Open(ctx, llm.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer caller.Close()

	task := &agent.Task{Name: "hours", StartURL: site.URL, Goal: "Find the opening hours and report them.", MaxSteps: 5}
	res, err := agent.Run(ctx, task, agent.Options{Page: page, Caller: caller})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	for _, s := range res.Steps {
		fmt.Println(s.Action, "on", s.Target)
	}
	fmt.Println(res.Answer)
	// Output:
	// succeeded
	// click [0] on link "Opening hours"
	// Opening hours: Monday to Friday, 9:00 to 17:00.
}
