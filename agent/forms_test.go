package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// A portal whose forms name their fields only by the words beside them,
// as many do: a login, then preferences with a drop-down and a set of
// checkboxes. The embedded default fills them from the goal alone.
func portal() *httptest.Server {
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Sign in", `<h1>Sign in</h1><form method="post" action="/login">
<div>Username</div><input name="u">
<div>Password</div><input name="p" type="password">
<p><input type="checkbox" name="keep"> Keep me signed in</p>
<button type="button" onclick="history.back()">Cancel</button> <button>Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("u") != "ada.l" || r.FormValue("p") != "correct-horse-7" {
			page(w, "Sign in", `<h1>Sign in</h1><p>The password is incorrect.</p>`)
			return
		}
		http.Redirect(w, r, "/home?u="+r.FormValue("u"), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Portal", "<h1>Welcome back, "+r.URL.Query().Get("u")+`</h1><a href="/prefs">Preferences</a>`)
	})
	mux.HandleFunc("GET /prefs", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Preferences", `<h1>Preferences</h1><form action="/saved">
<span>Delivery</span> <select name="d"><option>Standard (3-5 days)</option><option>Express delivery</option><option>Pick up in store</option></select>
<h2>Newsletters</h2>
<label><input type="checkbox" name="n" value="hiking"> Hiking</label>
<label><input type="checkbox" name="n" value="cycling" checked> Cycling</label>
<label><input type="checkbox" name="n" value="climbing"> Climbing</label>
<button type="reset">Reset</button> <button>Save</button></form>`)
	})
	mux.HandleFunc("GET /saved", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Saved", "<h1>Saved</h1><p>Delivery: "+r.FormValue("d")+"</p><p>Newsletters: "+strings.Join(r.Form["n"], ", ")+"</p>")
	})
	return httptest.NewServer(mux)
}

func TestTheDefaultFillsFormsByTheirLabels(t *testing.T) {
	chrometest.Require(t)
	srv := portal()
	defer srv.Close()
	for _, c := range []struct {
		name, path, goal string
		want             []string // in the steps, in order
		answer           string
	}{
		{"login", "/login", `Sign in as "ada.l" with the password "correct-horse-7".`,
			[]string{`type [0] "ada.l" on textbox "Username"`, `type [1] "[redacted]" on textbox "Password"`, `click [4] on button "Sign in"`}, "Welcome back, ada.l"},
		{"preferences", "/prefs", "Choose express delivery, subscribe to the hiking and climbing newsletters and save.",
			[]string{`select [0] "Express delivery" on combobox "Delivery"`, `click [1] on checkbox "Hiking"`, `click [3] on checkbox "Climbing"`, `click [5] on button "Save"`}, "Newsletters: hiking, cycling, climbing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			p, err := browser.Open(ctx, browser.Options{AllowedDomains: []string{"127.0.0.1"}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			caller, err := embedded.Open(ctx, llm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer caller.Close()
			task := &agent.Task{Name: c.name, StartURL: srv.URL + c.path, Goal: c.goal, MaxSteps: 8}
			res, err := agent.Run(ctx, task, agent.Options{Page: p, Caller: caller})
			var steps []string
			for _, s := range res.Steps {
				steps = append(steps, s.Action+" on "+s.Target)
				t.Logf("step %d %s on %s → %s [%s]", s.N, s.Action, s.Target, s.Outcome, s.Verdict)
			}
			if err != nil || res.Status != agent.Succeeded {
				t.Fatalf("%s: %s (%v)", res.Status, res.Reason, err)
			}
			all := strings.Join(steps, "\n")
			at := 0
			for _, w := range c.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("no step %q after the others in:\n%s", w, all)
				}
				at += i + len(w)
			}
			if !strings.Contains(res.Answer, c.answer) {
				t.Errorf("answer %q, want it to say %q", res.Answer, c.answer)
			}
		})
	}
}
