package captcha_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/examples/captcha"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// solved counts the service's answers; each must have been shown a picture.
var solved atomic.Int32

func TestMain(m *testing.M) {
	err := captcha.Register(captcha.SolverFunc(func(_ context.Context, pic []byte) (string, error) {
		if _, err := png.Decode(bytes.NewReader(pic)); err != nil {
			return "", fmt.Errorf("not a picture: %w", err)
		}
		solved.Add(1)
		return "K7Q2", nil
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// contactSite asks a captcha before it takes a message.
func contactSite() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/html")
		if r.Method == http.MethodPost {
			if r.FormValue("code") != "K7Q2" {
				fmt.Fprint(w, `<title>Contact</title><h1>Wrong code</h1><p>The captcha was not solved.</p>`)
				return
			}
			fmt.Fprint(w, `<title>Contact</title><h1>Sent</h1><p>Thank you: the captcha is solved and your form was sent.</p>`)
			return
		}
		fmt.Fprint(w, `<title>Contact</title><h1>Contact us</h1>
<form method=post action=/send>
<p><svg width=120 height=40><text x=10 y=28 font-size=24>K7Q2</text></svg></p>
<label for=code>Captcha</label> <input id=code name=code autocomplete=off>
<button>Send the form</button>
</form>`)
	}))
}

// The action is told to the model with the built-ins, the model picks it
// by the goal, it runs in the page, and the step is written in its form.
func TestAnActionOfOnesOwn(t *testing.T) {
	spec, ok := calltypes.LookupAction(captcha.Name)
	if !ok || spec.Element != calltypes.Required {
		t.Fatalf("solve-captcha is not registered: %+v", spec)
	}
	pick, _ := calltypes.Default().Lookup(calltypes.ClickPick)
	if !strings.Contains(pick.System, "solve-captcha the captcha whose text field") || !strings.HasSuffix(strings.SplitN(pick.System, "Actions: ", 2)[1][:strings.Index(strings.SplitN(pick.System, "Actions: ", 2)[1], ".\n")], "(reason says which)") {
		t.Fatalf("click-pick's prompt does not list solve-captcha before done:\n%s", pick.System)
	}
	if a, err := calltypes.ParseAction("solve-captcha [1]"); err != nil || a.Kind != captcha.Name || a.Index != 1 || a.String() != "solve-captcha [1]" {
		t.Fatalf("the written form: %+v, %v", a, err)
	}

	site := contactSite()
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := chrometest.Open(t, ctx, browser.Options{AllowedDomains: []string{"127.0.0.1"}})
	caller, err := embedded.Open(ctx, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	task := &agent.Task{Name: "contact", StartURL: site.URL, Goal: "Solve the captcha and send the form.",
		MaxSteps: 5, Success: &agent.Success{Text: "your form was sent"}}
	res, err := agent.Run(ctx, task, agent.Options{Page: page, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Action+" → "+s.Outcome)
	}
	if res.Status != agent.Succeeded || solved.Load() != 1 {
		t.Fatalf("status %s, the service asked %d times; steps:\n%s", res.Status, solved.Load(), strings.Join(steps, "\n"))
	}
	if len(res.Steps) == 0 || !strings.HasPrefix(res.Steps[0].Action, "solve-captcha [") {
		t.Fatalf("the first step is not the captcha's:\n%s", strings.Join(steps, "\n"))
	}
}
