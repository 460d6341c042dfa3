package browser

import (
	"strings"
	"testing"
)

// TestDialogsAreAnsweredAsTheyOpen: an alert while the page loads, a
// confirm a click opens and a beforeunload a link meets are each answered
// at once, as the policy says, and told of in the action's outcome and
// the next snapshot.
func TestDialogsAreAnsweredAsTheyOpen(t *testing.T) {
	s := site(t)
	ctx := ctxT(t)
	t.Run("accept", func(t *testing.T) {
		p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
		out, err := p.Navigate(ctx, s.URL+"/orders/index.html")
		if err != nil {
			t.Fatalf("an alert while the page loads: %v", err)
		}
		if len(out.Dialogs) != 1 || out.Dialogs[0].Kind != "alert" || out.Dialogs[0].Message != "Your session expires in 5 minutes." {
			t.Fatalf("navigate's outcome tells %+v, want the alert", out.Dialogs)
		}
		snap, err := p.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Dialogs) != 1 || !strings.Contains(snap.Dialogs[0].String(), `"Your session expires in 5 minutes."`) {
			t.Fatalf("the snapshot after the load tells %+v, want the alert", snap.Dialogs)
		}
		if again, _ := p.Observe(ctx); len(again.Dialogs) != 0 {
			t.Errorf("a second snapshot tells the alert again: %+v", again.Dialogs)
		}

		if _, err := p.Navigate(ctx, s.URL+"/orders/order.html?id=7"); err != nil {
			t.Fatal(err)
		}
		out, err = p.Click(ctx, CSS("#delete"))
		if err != nil {
			t.Fatalf("a click that opens a confirm: %v", err)
		}
		if got, want := out.String(), `changed; the page asked "Delete order 7?" and it was accepted`; got != want {
			t.Errorf("the click's outcome is %q, want %q", got, want)
		}
		if text := observeText(t, p); !strings.Contains(text, "Order 7 deleted.") {
			t.Errorf("the confirm was not accepted: the page reads %q", text)
		}

		if _, err := p.Navigate(ctx, s.URL+"/orders/note.html"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Type(ctx, CSS("#note"), "Call the customer", false); err != nil {
			t.Fatal(err)
		}
		out, err = p.Click(ctx, CSS("a"))
		if err != nil {
			t.Fatalf("leaving a page that asks first: %v", err)
		}
		if out.Effect != Navigated || !strings.Contains(out.String(), "the page asked whether to leave it and it was left") {
			t.Errorf("leaving the note: %q, want a navigation past the beforeunload question", out.String())
		}
	})
	t.Run("dismiss", func(t *testing.T) {
		p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Dialogs: DismissDialogs})
		if _, err := p.Navigate(ctx, s.URL+"/orders/order.html?id=8"); err != nil {
			t.Fatal(err)
		}
		out, err := p.Click(ctx, CSS("#delete"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `the page asked "Delete order 8?" and it was dismissed`) {
			t.Errorf("the click's outcome is %q, want the confirm dismissed", out.String())
		}
		if text := observeText(t, p); !strings.Contains(text, "Order 8 kept.") {
			t.Errorf("the confirm was not dismissed: the page reads %q", text)
		}
	})
}

func observeText(t *testing.T, p *Page) string {
	t.Helper()
	snap, err := p.Observe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return snap.Text
}

func TestCheckDialogPolicy(t *testing.T) {
	for _, d := range []DialogPolicy{"", AcceptDialogs, DismissDialogs} {
		if err := CheckDialogPolicy(d); err != nil {
			t.Errorf("%q: %v", d, err)
		}
	}
	err := CheckDialogPolicy("ignore")
	if err == nil || !strings.Contains(err.Error(), `"ignore" is not a way to answer dialogs`) {
		t.Errorf("ignore: %v", err)
	}
}
