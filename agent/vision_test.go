package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
)

// A page whose content is a canvas, and one that says the same in words.
const (
	canvasPage = `<!doctype html><title>Sales</title><canvas id=c width=640 height=360></canvas>
<button onclick="document.body.insertAdjacentHTML('beforeend','<p>Noted.</p>')">Note the total</button>
<script>var x=document.getElementById('c').getContext('2d');x.fillStyle='#123';x.font='48px sans-serif';x.fillText('Total: 812 EUR',40,120)</script>`
	textPage = `<!doctype html><title>Sales</title><h1>Sales</h1><p>Total: 812 EUR</p>
<button onclick="document.body.insertAdjacentHTML('beforeend','<p>Noted.</p>')">Note the total</button>`
)

// With vision: auto on click-pick, a pick on the canvas page carries the
// page's screenshot and its record the image's tokens; on the text page
// it carries none, and with vision never neither does.
func TestAutoVisionSendsTheScreenshotWhenTheWordsAreThin(t *testing.T) {
	chrometest.Require(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/canvas" {
			fmt.Fprint(w, canvasPage)
		} else {
			fmt.Fprint(w, textPage)
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		page, vision string
		images       bool
	}{
		{"/canvas", "auto", true},
		{"/text", "auto", false},
		{"/canvas", "never", false},
	} {
		t.Run(c.page+"/"+c.vision, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			f, _, err := config.Parse("vision.yaml", []byte("calltypes:\n  click-pick: {vision: "+c.vision+"}\n"))
			if err != nil {
				t.Fatal(err)
			}
			task := &agent.Task{Name: "sales", StartURL: srv.URL + c.page, Goal: "Note the total.", AllowedDomains: []string{"127.0.0.1"}, MaxSteps: 2}
			calls := filepath.Join(t.TempDir(), "calls.jsonl")
			res, _ := agent.RunTask(ctx, task, agent.TaskOptions{Config: f, LLM: llm.Options{Record: calls}})
			picks, pictured := 0, 0
			for _, st := range res.Steps {
				for _, call := range st.Calls {
					if call.Type != calltypes.ClickPick {
						continue
					}
					picks++
					if call.Images > 0 {
						pictured++
						// Detail low is one price whatever the size: the
						// embedded default's gpt-4o-mini counts 2,833.
						if want := models.ImageTokens("gpt-4o-mini", 1, 1, calltypes.DetailLow); call.ImageTokens != want {
							t.Errorf("a pick's image was priced %d tokens, want %d", call.ImageTokens, want)
						}
					}
				}
			}
			if picks == 0 {
				t.Fatalf("no pick was made: %s", res.Reason)
			}
			if got := pictured > 0; got != c.images {
				t.Errorf("%d of %d picks carried the screenshot, want images %v", pictured, picks, c.images)
			}
			// The recorded request carries the image, and its record the
			// image's tokens.
			b, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			recorded := strings.Contains(string(b), `"image_url"`) && strings.Contains(string(b), `"image_tokens":`)
			if recorded != c.images {
				t.Errorf("the cassette holds an image and its tokens: %v, want %v", recorded, c.images)
			}
		})
	}
}
