package pageview

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// copyFiles copies names from dir into a new directory.
func copyFiles(t *testing.T, dir string, names ...string) string {
	t.Helper()
	out := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// On the catalogue, both ways: the view shows every element and every
// word within the pick's cap where the JSON page showed 74 elements and
// no words; a step reserves less than half.
func TestMeasureTheCatalogue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	chrometest.Require(t)
	pages := copyFiles(t, testsite.Dir(), "catalogue.har", "catalogue.steps.yaml")
	tasks := copyFiles(t, filepath.Join(testsite.Dir(), "..", "tasks"), "catalogue-walnut-cart.yaml", "catalogue-walnut-cart.har", "fleet.yaml")
	r, err := Measure(ctx, Options{Pages: pages, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	var pick *PageRow
	for i, p := range r.Pages {
		if p.Page == "catalogue" && p.Type == calltypes.ClickPick {
			pick = &r.Pages[i]
		}
	}
	if pick == nil {
		t.Fatalf("no click-pick row for the catalogue: %+v", r.Pages)
	}
	if pick.View.Elements != pick.ElementsAll || pick.View.TextChars != pick.TextAll || pick.View.Tokens > 2000 {
		t.Errorf("the view shows %d of %d elements, %d of %d characters of words, in %d tokens", pick.View.Elements, pick.ElementsAll, pick.View.TextChars, pick.TextAll, pick.View.Tokens)
	}
	if pick.Today.Elements >= pick.ElementsAll || pick.Today.Tokens > 2000 {
		t.Errorf("the JSON page shows %d of %d elements in %d tokens: the baseline is not today's", pick.Today.Elements, pick.ElementsAll, pick.Today.Tokens)
	}
	if len(r.Tasks) != 1 || r.Tasks[0].Steps != 2 {
		t.Fatalf("tasks %+v", r.Tasks)
	}
	for _, s := range r.Steps {
		if s.View > 2500 || s.View*2 > s.Today {
			t.Errorf("step %d (%s): %d reserved in the view, %d today", s.Step, s.Action, s.View, s.Today)
		}
	}
	t.Logf("steps: %d today, %d in the view (%.2f)", r.Today, r.View, r.Ratio())
}
