package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/chrometest"
)

// invoices is a list of open invoices, each row its own "Pay" button,
// whose layout a test can change between runs: the rows reversed, one
// gone, the button renamed, a notice to pass before the list.
type invoices struct {
	*httptest.Server
	mu              sync.Mutex
	reverse, notice bool
	gone, label     string
	due             string // words after each row's amount
	paid            []string
}

func newInvoices() *invoices {
	s := &invoices{label: "Pay"}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><html><head><title>Invoices</title></head><body>%s</body></html>", body)
	}
	mux.HandleFunc("GET /invoices", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.notice && r.URL.Query().Get("seen") == "" {
			page(w, `<h1>Notice</h1><p>Our bank details changed on 1 December.</p><a href="/invoices?seen=1">Continue to invoices</a>`)
			return
		}
		rows := [][3]string{{"INV-1042", "Acme GmbH", "120 EUR"}, {"INV-1043", "Borealis AB", "75 EUR"}, {"INV-1044", "Cobalt SA", "310 EUR"}, {"INV-1045", "Dune Ltd", "42 EUR"}}
		rows = slices.DeleteFunc(rows, func(r [3]string) bool { return r[0] == s.gone })
		if s.reverse {
			slices.Reverse(rows)
		}
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, `<li>%s &middot; %s &middot; %s%s <button onclick="location.href='/paid?inv=%s'">%s</button></li>`, r[0], r[1], r[2], s.due, r[0], s.label)
		}
		page(w, "<h1>Open invoices</h1><ul>"+b.String()+"</ul>")
	})
	mux.HandleFunc("GET /paid", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		inv := r.URL.Query().Get("inv")
		s.paid = append(s.paid, inv)
		s.mu.Unlock()
		page(w, "<h1>Payment sent</h1><p>Paid "+inv+". Thank you.</p>")
	})
	s.Server = httptest.NewServer(mux)
	return s
}

func (s *invoices) set(f func(*invoices)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *invoices) payments() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paid)
}

// payTask is one task file for every row: the invoice is a parameter.
func payTask(t *testing.T, url string) *agent.Task {
	t.Helper()
	task, err := agent.ParseTask("pay.yaml", []byte(`name: pay-invoice
start_url: `+url+`/invoices
goal: Pay invoice {{invoice}}.
params: {invoice: INV-1042}
allowed_domains: [127.0.0.1]
max_steps: 5
deadline: 90s
success: {text: "Paid {{invoice}}."}
`))
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// runPay runs the task for one invoice on the library, as headroom run
// --param invoice=… --learned does.
func runPay(t *testing.T, task *agent.Task, lib *learned.Library, invoice string) agent.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := agent.RunTask(ctx, task, agent.TaskOptions{Learned: lib, Params: map[string]string{"invoice": invoice}, Browser: browser.Options{Logf: t.Logf}})
	logResult(t, res)
	if l := res.Learned; l != nil {
		t.Logf("learned: %+v", *l)
	}
	if err != nil && res.Status == agent.Errored {
		t.Fatalf("%s: %v", res.Status, err)
	}
	return res
}

// modelCalls counts the calls that chose or checked steps: a summary
// may stay.
func modelCalls(res agent.Result) int {
	n := 0
	for _, c := range res.Calls {
		if c.Type != calltypes.Summarize {
			n++
		}
	}
	for _, s := range res.Steps {
		n += len(s.Calls)
	}
	return n
}

func dirLibrary(t *testing.T) (*learned.Library, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "learned")
	d, err := learned.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	lib := learned.NewLibrary(d, learned.Options{})
	t.Cleanup(func() { lib.Close() })
	return lib, dir
}

func TestLearnedRunsReplayForEveryRow(t *testing.T) {
	chrometest.Require(t)
	site := newInvoices()
	defer site.Close()
	task := payTask(t, site.URL)
	lib, dir := dirLibrary(t)

	first := runPay(t, task, lib, "INV-1042")
	if first.Status != agent.Succeeded || first.Learned == nil || first.Learned.Stored != agent.StoredLearned || modelCalls(first) == 0 {
		t.Fatalf("run 1: %s, learned %+v, %d calls", first.Status, first.Learned, modelCalls(first))
	}
	second := runPay(t, task, lib, "INV-1043")
	if second.Status != agent.Succeeded || modelCalls(second) != 0 || second.Totals.TokensReserved != 0 {
		t.Fatalf("run 2 (another row): %s, %d calls, %d tokens; want succeeded with none", second.Status, modelCalls(second), second.Totals.TokensReserved)
	}
	if second.Totals.TokensSaved == 0 || second.Learned.Replayed == 0 || !second.Steps[0].Replayed {
		t.Errorf("run 2 saved %d tokens over %d replayed steps", second.Totals.TokensSaved, second.Learned.Replayed)
	}
	site.set(func(s *invoices) { s.reverse = true })
	third := runPay(t, task, lib, "INV-1044")
	if third.Status != agent.Succeeded || modelCalls(third) != 0 {
		t.Fatalf("run 3 (rows reversed): %s, %d calls", third.Status, modelCalls(third))
	}
	site.set(func(s *invoices) { s.reverse, s.gone = false, "INV-1045" })
	fourth := runPay(t, task, lib, "INV-1045")
	if fourth.Status == agent.Succeeded {
		t.Fatalf("run 4 (the row is gone) claimed success: %s", fourth.Reason)
	}
	if fourth.Learned == nil || fourth.Learned.Miss != learned.MissElement {
		t.Errorf("run 4 learned %+v, want a miss of the element", fourth.Learned)
	}
	if got := site.payments(); !slices.Equal(got, []string{"INV-1042", "INV-1043", "INV-1044"}) {
		t.Errorf("paid %v, want INV-1042, INV-1043 and INV-1044 once each", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "INV-104") {
			t.Errorf("%s holds a parameter's value:\n%s", f, b)
		}
	}
	if s := lib.Stats(); s.Hits != 2 || s.Stored != 1 {
		t.Errorf("stats %+v, want 2 hits and 1 entry stored", s)
	}
}

func TestLearnedRunsHealWhereTheSiteChanged(t *testing.T) {
	chrometest.Require(t)
	site := newInvoices()
	defer site.Close()
	task := payTask(t, site.URL)
	lib, _ := dirLibrary(t)
	if res := runPay(t, task, lib, "INV-1042"); res.Status != agent.Succeeded {
		t.Fatalf("run 1: %s", res.Status)
	}
	site.set(func(s *invoices) { s.label, s.notice = "Pay now", true })
	healed := runPay(t, task, lib, "INV-1043")
	if healed.Status != agent.Succeeded || healed.Learned.Stored != agent.StoredHealed || healed.Learned.StoredRevision != 2 {
		t.Fatalf("the changed site: %s, learned %+v; want succeeded and healed to revision 2", healed.Status, healed.Learned)
	}
	if modelCalls(healed) == 0 || healed.Learned.Miss == "" {
		t.Errorf("the changed site was replayed with no call: %+v", healed.Learned)
	}
	next := runPay(t, task, lib, "INV-1044")
	if next.Status != agent.Succeeded || modelCalls(next) != 0 || next.Learned.Revision != 2 {
		t.Fatalf("after healing: %s, %d calls, revision %d; want the healed steps replayed", next.Status, modelCalls(next), next.Learned.Revision)
	}
	if s := lib.Stats(); s.Heals != 1 || s.Misses[learned.MissElement]+s.Misses[learned.MissOutcome] == 0 {
		t.Errorf("stats %+v", s)
	}
}

// A task that reads an answer keeps where its summary read it: the next
// run, for another row, reads that row and asks nothing; a row whose
// words changed is read by the summary again, and learned anew.
func TestLearnedAnswersAreReadWhereTheSummaryReadThem(t *testing.T) {
	chrometest.Require(t)
	site := newInvoices()
	defer site.Close()
	task, err := agent.ParseTask("amount.yaml", []byte(`name: invoice-amount
start_url: `+site.URL+`/invoices
goal: Report the amount of invoice {{invoice}}.
params: {invoice: INV-1042}
allowed_domains: [127.0.0.1]
max_steps: 3
deadline: 90s
success: {text: "{{invoice}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := dirLibrary(t)
	first := runPay(t, task, lib, "INV-1042")
	if first.Status != agent.Succeeded || len(first.Calls) == 0 || first.Learned.Stored != agent.StoredLearned || !strings.Contains(first.Answer, "120 EUR") {
		t.Fatalf("run 1: %s, %d calls, learned %+v, answer %q", first.Status, len(first.Calls), first.Learned, first.Answer)
	}
	e, err := lib.Load(context.Background(), first.Learned.Key)
	if err != nil || e.Answer == nil {
		t.Fatalf("entry %+v (%v): want where the answer was read", e, err)
	}
	t.Logf("answer: %s", e.Answer)

	site.set(func(s *invoices) { s.reverse = true })
	second := runPay(t, task, lib, "INV-1043")
	if second.Status != agent.Succeeded || len(second.Calls) != 0 || modelCalls(second) != 0 || !second.Learned.AnswerRead {
		t.Fatalf("run 2: %s, %d calls, learned %+v; want the answer read with no call", second.Status, len(second.Calls), second.Learned)
	}
	if !strings.Contains(second.Answer, "INV-1043") || !strings.Contains(second.Answer, "75 EUR") || strings.Contains(second.Answer, "INV-1042") {
		t.Errorf("run 2 answered %q, want invoice INV-1043's row", second.Answer)
	}
	if second.Totals.TokensSaved < first.Calls[len(first.Calls)-1].TokensReserved {
		t.Errorf("run 2 saved %d tokens, less than the summary's %d", second.Totals.TokensSaved, first.Calls[len(first.Calls)-1].TokensReserved)
	}

	site.set(func(s *invoices) { s.due = ", due Friday" })
	more := runPay(t, task, lib, "INV-1044")
	if more.Status != agent.Succeeded || len(more.Calls) != 0 || !strings.Contains(more.Answer, "310 EUR, due Friday") {
		t.Fatalf("run 3 (the row says more): %s, %d calls, answer %q; want the row read as it is now", more.Status, len(more.Calls), more.Answer)
	}
	site.set(func(s *invoices) { s.label = "Pay now" })
	changed := runPay(t, task, lib, "INV-1045")
	if changed.Status != agent.Succeeded || changed.Learned.Miss != learned.MissAnswer || changed.Learned.Stored != agent.StoredHealed || len(changed.Calls) != 1 {
		t.Fatalf("run 4 (a line it read says other words): %s, %d calls, learned %+v; want the summary asked and the answer learned anew", changed.Status, len(changed.Calls), changed.Learned)
	}
	next := runPay(t, task, lib, "INV-1042")
	if next.Status != agent.Succeeded || len(next.Calls) != 0 || !strings.Contains(next.Answer, "120 EUR") || !next.Learned.AnswerRead {
		t.Fatalf("run 5: %s, %d calls, answer %q", next.Status, len(next.Calls), next.Answer)
	}
}

func TestLearnedEntriesThatCannotBeFollowedAreMisses(t *testing.T) {
	chrometest.Require(t)
	site := newInvoices()
	defer site.Close()
	task := payTask(t, site.URL)
	key := agent.TemplateKey(task, calltypes.Default())
	step := func(action string) string {
		return `{"format":1,"key":"` + key + `","task":"pay-invoice","template":{"goal":"g","start":"s"},"learned_at":"2026-12-01T00:00:00Z","goals":[{"step":0,"goal":"g","steps":[{"action":` + action + `,"outcome":{"effect":"navigated"},"reserved":10}]}]}`
	}
	for _, c := range []struct {
		name, data, reason string
		sign               []byte
	}{
		{"not JSON", "{garbage", learned.MissUnusable, nil},
		{"unknown parameter", step(`"navigate \"/paid?inv={{account}}\""`), learned.MissUnusable, nil},
		{"unknown secret", step(`"navigate \"/x?p=<secret:pin>\""`), learned.MissUnusable, nil},
		{"no such action", step(`"\"wave\" [2] \"\""`), learned.MissUnusable, nil},
		{"unsigned where signed are read", step(`"navigate \"/paid?inv={{invoice}}\""`), learned.MissUnsigned, []byte("fleet key")},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := learned.NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Put(context.Background(), key, 1, []byte(c.data)); err != nil {
				t.Fatal(err)
			}
			lib := learned.NewLibrary(d, learned.Options{SignKey: c.sign})
			defer lib.Close()
			res := runPay(t, task, lib, "INV-1043")
			if res.Status != agent.Succeeded || res.Learned == nil || modelCalls(res) == 0 {
				t.Fatalf("%s, learned %+v: want the model to run it", res.Status, res.Learned)
			}
			if lib.Stats().Misses[c.reason] != 1 {
				t.Errorf("misses %v, want one %s", lib.Stats().Misses, c.reason)
			}
			if got := site.payments(); got[len(got)-1] != "INV-1043" {
				t.Errorf("paid %v", got)
			}
			if c.sign == nil && res.Learned.Stored != agent.StoredHealed {
				t.Errorf("stored %q: a verified run replaces an unusable entry", res.Learned.Stored)
			}
		})
	}
}

// A fleet that starts together on a template nobody has learned asks the
// model once: the others wait for the one that holds the lease.
func TestAFleetLearnsATemplateOnce(t *testing.T) {
	chrometest.Require(t)
	site := newInvoices()
	defer site.Close()
	task := payTask(t, site.URL)
	lib, _ := dirLibrary(t)
	var wg sync.WaitGroup
	results := make([]agent.Result, 3)
	for i, inv := range []string{"INV-1042", "INV-1043", "INV-1044"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runPay(t, task, lib, inv)
		}()
	}
	wg.Wait()
	asked := 0
	for i, res := range results {
		if res.Status != agent.Succeeded {
			t.Errorf("agent %d: %s: %s", i, res.Status, res.Reason)
		}
		if modelCalls(res) > 0 {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("%d agents asked the model, want 1", asked)
	}
	if s := lib.Stats(); s.Stored != 1 || s.Hits != 2 {
		t.Errorf("stats %+v", s)
	}
	_ = errors.New
}
