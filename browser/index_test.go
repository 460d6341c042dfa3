package browser

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// wantGone checks an ErrIndexGone that names the index and says what to do.
func wantGone(t *testing.T, index string) func(Outcome, error) {
	t.Helper()
	return func(o Outcome, err error) {
		t.Helper()
		wantErr(t, ErrIndexGone)(o, err)
		if err != nil && (!strings.Contains(err.Error(), " "+index+": ") || !strings.Contains(err.Error(), "observe")) {
			t.Errorf("the error should name %s and say to observe: %v", index, err)
		}
	}
}

func TestAnIndexBelongsToItsSnapshot(t *testing.T) {
	t.Parallel()
	s := site(t)
	p := open(t, Options{})
	ctx := ctxT(t)
	mustAct(t, Navigated)(p.Do(ctx, Navigate(s.URL+"/form/index.html")))
	first := observe(t, p)
	name := line(t, first, `textbox "Full name"`).Index

	t.Run("observing again does not move it", func(t *testing.T) {
		// A field added above shifts every index in the next snapshot.
		if _, err := chromedp.Run(p.first.ctx, chromedp.Evaluate[bool](`
			const i = document.createElement('input'); i.id = 'extra'; i.setAttribute('aria-label', 'Added later');
			document.body.prepend(i); true`)); err != nil {
			t.Fatal(err)
		}
		second := observe(t, p)
		if second.Elements[name].Name == "Full name" {
			t.Fatalf("the second snapshot should number the fields differently:\n%s", second)
		}
		mustAct(t, Changed)(p.Do(ctx, TypeInto(first.Index(name), "Ada", false)))
		if v, _ := p.Extract(ctx, CSS("#name")); v != "Ada" {
			t.Errorf("typed into the wrong field: #name holds %q", v)
		}
		if v, _ := p.Extract(ctx, CSS("#extra")); v != "" {
			t.Errorf("typed into the wrong field: #extra holds %q", v)
		}
	})

	t.Run("a cut copy resolves the same", func(t *testing.T) {
		cut := *first
		cut.Elements = first.Elements[: name+1 : name+1]
		mustAct(t, Changed)(p.Do(ctx, TypeInto((&cut).Index(name), "Grace", false)))
		if v, _ := p.Extract(ctx, CSS("#name")); v != "Grace" {
			t.Errorf("#name holds %q", v)
		}
		wantGone(t, "["+strconv.Itoa(name+1)+"]")(p.Do(ctx, Click((&cut).Index(name+1)))) // cut away: never seen
	})

	t.Run("out of range", func(t *testing.T) {
		wantGone(t, "[-1]")(p.Do(ctx, Click(first.Index(-1))))
		n := len(first.Elements)
		wantGone(t, "["+strconv.Itoa(n)+"]")(p.Do(ctx, Click(first.Index(n))))
		wantGone(t, "[0]")(p.Do(ctx, Click((&Snapshot{}).Index(0)))) // not from an observation
	})

	t.Run("from a snapshot of another page", func(t *testing.T) {
		other := open(t, Options{})
		mustAct(t, Navigated)(other.Do(ctx, Navigate(s.URL+"/form/index.html")))
		theirs := observe(t, other)
		wantGone(t, "[0]")(p.Do(ctx, Click(theirs.Index(0))))
		wantGone(t, "[0]")(other.Do(ctx, Click(first.Index(0))))
	})

	t.Run("gone after a navigation", func(t *testing.T) {
		mustAct(t, Navigated)(p.Do(ctx, Navigate(s.URL+"/shop/index.html")))
		wantGone(t, "["+strconv.Itoa(name)+"]")(p.Do(ctx, TypeInto(first.Index(name), "Ada", false)))
		wantGone(t, "[0]")(p.Do(ctx, Click(first.Index(0))))
	})
}
