package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

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

// A task file run with one call: the browser fenced to the task's domains,
// its recorded pages replayed (nothing listens where they were recorded),
// and the embedded default for a model.
func ExampleRunTask() {
	t, err := agent.LoadTask("../testdata/tasks/shop-cheapest-desk.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := agent.RunTask(context.Background(), t, agent.TaskOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.SuccessBy, res.AllowedDomains)
	fmt.Println(strings.Contains(res.Answer, "640 EUR"))
	// Output:
	// succeeded model [127.0.0.1]
	// true
}
