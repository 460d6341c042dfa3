package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/testsite"
	"github.com/headroom-agent/headroom/llm/embedded"
)

var (
	update     = flag.Bool("update", false, "record testdata/tasks/*.har again by running each task live on the test sites")
	updateOnly = flag.String("update-only", "", "with -update, record only the tasks whose name matches this regular expression")
)

// siteAddr is where the recordings were made: the tasks' start URLs name it.
const siteAddr = "127.0.0.1:8391"

// taskWants is how each task in testdata/tasks must end on its recording
// with the embedded default: its status, what its answer says, and what
// one of its steps did, where the final page alone cannot tell (a sort).
// Each is a regular expression, "" for none.
var taskWants = map[string]struct {
	status []agent.Status
	answer string
	step   string // an action and its target, as the result writes them
}{
	"shop-cheapest-desk":     {[]agent.Status{agent.Succeeded}, `Walnut writing desk 640 EUR`, `^select \[\d+\] "Price, low to high" on combobox "Sort by"$`},
	"shop-priciest-desk":     {[]agent.Status{agent.Succeeded}, `890 EUR`, `^select \[\d+\] "Price, high to low"`},
	"shop-oak-desk-cart":     {[]agent.Status{agent.Succeeded}, `2 in your cart`, `^select \[\d+\] "2" on combobox "Quantity"$`},
	"shop-sofa":              {[]agent.Status{agent.Failed, agent.Stuck}, ``, ``},
	"form-signup":            {[]agent.Status{agent.Succeeded}, `Welcome, Ada Lovelace`, `^select \[\d+\] "Norway" on combobox "Country"$`},
	"form-empty":             {[]agent.Status{agent.Succeeded}, `Full name is required\.`, ``},
	"feed-suppliers":         {[]agent.Status{agent.Succeeded}, `Three new oak suppliers`, `^click \[\d+\] on button "Load more"$`},
	"feed-members":           {[]agent.Status{agent.Succeeded}, `12 members, 3 online`, ``},
	"catalogue-walnut-count": {[]agent.Status{agent.Succeeded}, `(^|[^0-9])4 pieces`, `^click \[\d+\] on checkbox "Walnut"$`},
	// On the page of realistic size the cap binds; the price is the
	// lowest of the sixteen jackets the filter shows.
	"store-cheapest-waterproof": {[]agent.Status{agent.Succeeded}, `Ridgeline Isbre softshell jacket 66\.95 EUR`, `^click \[\d+\] on checkbox "Waterproof"$`},
	// Signed in with secrets typed by name; then the invoices.
	"portal-invoices": {[]agent.Status{agent.Succeeded}, `Open invoices`, `^click \[\d+\] on link "Open invoices"$`},
	// Signed in from a storage-state file written by hand.
	"portal-home-from-state": {[]agent.Status{agent.Succeeded}, `3 open invoices`, ``},
	// The page asks before it deletes, and alerts as it loads: each
	// dialog is answered as it opens.
	"orders-delete":          {[]agent.Status{agent.Succeeded}, ``, `^click \[\d+\] on button "Delete order 7"$`},
	"orders-open":            {[]agent.Status{agent.Succeeded}, `Order 7 is open`, `^click \[\d+\] on link "Open order 7"`},
	"orders-report-december": {[]agent.Status{agent.Succeeded}, `December,412`, `^click \[\d+\] on link "Download the orders report \(CSV\)"$`},
	"orders-upload":          {[]agent.Status{agent.Succeeded}, ``, `^click \[\d+\] on button "Send the invoice"$`},
	"orders-report":          {[]agent.Status{agent.Succeeded}, ``, `^click \[\d+\] on link "Download the orders report \(CSV\)"$`},
	// The model uploads the declared file by name; the sign-in popup is
	// followed and, once it closes itself, its opener.
	"orders-attach": {[]agent.Status{agent.Succeeded}, ``, `^upload \[\d+\] <file:invoice> on button "Invoice file"$`},
	"orders-signin": {[]agent.Status{agent.Succeeded}, `Signed in as ada`, `^click \[\d+\] on button "Sign in"$`},
	// A menu only the keyboard works; a page that asks before it is left.
	"orders-ship": {[]agent.Status{agent.Succeeded}, ``, `^press "Enter"`},
	"orders-note": {[]agent.Status{agent.Succeeded}, ``, `^click \[\d+\] on link "Back to orders"$`},
	// An opened PDF is read as the page: the answer is in its rows.
	"orders-invoice": {[]agent.Status{agent.Succeeded}, `2,225\.00 EUR`, `^click \[\d+\] on link "Invoice INV-7"$`},
	// A downloaded PDF is read into its note: the answer is in its rows.
	"orders-invoice-pdf": {[]agent.Status{agent.Succeeded}, `2,225\.00 EUR`, `^click \[\d+\] on link "Download INV-7 \(PDF\)"$`},
	// The card form is a frame from another host, read in place.
	"orders-pay": {[]agent.Status{agent.Succeeded}, `Order 7 is paid`, `^type \[\d+\] "4242 4242 4242 4242" on textbox "Card number"$`},
	// The answer names the first walnut piece, the one added.
	"catalogue-walnut-cart": {[]agent.Status{agent.Succeeded}, `^Walnut dresser .*330 EUR Added$`, `^click \[\d+\] on button "Add to cart" in "Walnut dresser"$`},
}

// determinismTask is replayed twice, and must do the same both times.
const determinismTask = "form-signup"

// secretTyped is the password form-signup's scripted step types.
const secretTyped = "analytical-1843"

// TestTestdataTasks runs every task in testdata/tasks offline on its
// recording with the embedded default and checks how it ends. With
// -update it first runs each one live on the test sites and records the
// run's own pages as the task's replay.
// fleetList is the task list of bench agents, beside the tasks.
const fleetList = "fleet.yaml"

// withSecrets are the tasks that read secrets from the environment: the
// fleet's agents are given none.
var withSecrets = map[string]bool{"portal-invoices": true}

// The fleet's list holds every task that succeeds on its recording, and
// no other: bench agents counts a failed task as the budget's doing. A
// task that needs secrets stays out: the benchmark gives its agents none.
func TestFleetListIsTheTasksThatSucceed(t *testing.T) {
	tasks, err := agent.LoadTaskList(filepath.Join(testsite.Dir(), "..", "tasks", fleetList))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, task := range tasks {
		listed[task.Name] = true
		if w, ok := taskWants[task.Name]; !ok || len(w.status) != 1 || w.status[0] != agent.Succeeded {
			t.Errorf("%s lists %s, which does not succeed on its recording", fleetList, task.Name)
		}
	}
	for name, w := range taskWants {
		if len(w.status) == 1 && w.status[0] == agent.Succeeded && !listed[name] && !withSecrets[name] {
			t.Errorf("%s leaves out %s, which succeeds", fleetList, name)
		}
	}
}

func TestTestdataTasks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testsite.Dir(), "..", "tasks", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no task files: %v", err)
	}
	var tasks []*agent.Task
	for _, f := range files {
		if filepath.Base(f) == fleetList {
			continue
		}
		task, err := agent.LoadTask(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := taskWants[task.Name]; !ok {
			t.Fatalf("%s: task %q has no entry in taskWants", f, task.Name)
		}
		if task.Replay == "" {
			t.Fatalf("%s: the task names no replay", f)
		}
		tasks = append(tasks, task)
	}
	if len(tasks) != len(taskWants) {
		t.Errorf("%d task files, %d entries in taskWants", len(tasks), len(taskWants))
	}
	chrometest.Require(t)
	// The portal's account, for the tasks that sign in with secrets.
	t.Setenv("PORTAL_USER", testsite.PortalUser)
	t.Setenv("PORTAL_PASSWORD", testsite.PortalPassword)
	if *update {
		srv, err := testsite.Start(siteAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("record", func(t *testing.T) {
			only := regexp.MustCompile(*updateOnly)
			for _, task := range tasks {
				if !only.MatchString(task.Name) {
					continue
				}
				t.Run(task.Name, func(t *testing.T) {
					t.Parallel()
					recordTask(t, task)
				})
			}
		})
		srv.Close()
	}
	// Offline means offline: a site still serving the recordings' origin
	// could hide a request the replay does not answer.
	if c, err := net.DialTimeout("tcp", siteAddr, time.Second); err == nil {
		c.Close()
		t.Fatalf("something listens on %s: the replays must run with nothing there", siteAddr)
	}
	for _, task := range tasks {
		t.Run(task.Name, func(t *testing.T) {
			t.Parallel()
			want := taskWants[task.Name]
			res, misses := replayTask(t, task)
			logResult(t, res)
			if !slices.Contains(want.status, res.Status) {
				t.Errorf("status %s (%s), want %v", res.Status, res.Reason, want.status)
			}
			if misses != 0 {
				t.Errorf("the replay missed %d requests", misses)
			}
			if res.Status == agent.Succeeded && strings.TrimSpace(res.Answer) == "" {
				t.Error("succeeded with an empty answer")
			}
			// A success says how it is known: the task's check, when it has
			// one, else the model's judgement; and what answered.
			if res.Status == agent.Succeeded {
				by := agent.SuccessJudged
				if task.Success != nil {
					by = agent.SuccessChecked
				}
				if res.SuccessBy != by {
					t.Errorf("success_by %q, want %q (%s)", res.SuccessBy, by, res.Reason)
				}
			}
			if res.Model != embedded.Model {
				t.Errorf("model %q, want the embedded stand-in named", res.Model)
			}
			if want.answer != "" && !regexp.MustCompile(want.answer).MatchString(res.Answer) {
				t.Errorf("answer %q does not match %q", res.Answer, want.answer)
			}
			if want.step != "" && !slices.ContainsFunc(res.Steps, func(s agent.Step) bool {
				return regexp.MustCompile(want.step).MatchString(s.Action + " on " + s.Target)
			}) {
				t.Errorf("no step matches %q", want.step)
			}
			// What a task types into a password field stays out of the
			// result, the steps' wording included.
			for _, secret := range []string{secretTyped, testsite.PortalPassword, testsite.PortalUser} {
				if b, _ := json.Marshal(res); bytes.Contains(b, []byte(secret)) {
					t.Errorf("the secret %q reached the result: %s", secret, b)
				}
			}
			if task.Name == determinismTask {
				again, _ := replayTask(t, task)
				a, b := untimed(t, res), untimed(t, again)
				if !reflect.DeepEqual(a, b) {
					ja, _ := json.MarshalIndent(a, "", " ")
					jb, _ := json.MarshalIndent(b, "", " ")
					t.Errorf("two replays differ:\n%s\n---\n%s", ja, jb)
				}
			}
		})
	}
}

// recordTask runs the task live, as headroom run --record-har does, and
// writes what its pages fetched to the task's replay file.
func recordTask(t *testing.T, task *agent.Task) {
	rec := replay.NewRecorder(time.Now().UTC().Truncate(time.Second), replay.DefaultRedactor(), "headroom", "testdata")
	live := *task
	live.Replay = ""
	res := runTask(t, &live, browser.Options{Record: rec})
	logResult(t, res)
	if rec.Len() == 0 {
		t.Fatal("nothing recorded")
	}
	if err := rec.Archive().WriteFile(task.Replay); err != nil {
		t.Fatal(err)
	}
}

// replayTask runs the task on its recording, and counts the misses.
func replayTask(t *testing.T, task *agent.Task) (agent.Result, int) {
	res := runTask(t, task, browser.Options{})
	if len(res.ReplayMissed) > 0 {
		t.Logf("missed: %v", res.ReplayMissed)
	}
	return res, len(res.ReplayMissed)
}

// runTask runs the task as headroom run does: one call, the embedded
// default, the task's own replay and allowlist.
func runTask(t *testing.T, task *agent.Task, bo browser.Options) agent.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bo.Logf = t.Logf
	res, err := agent.RunTask(ctx, task, agent.TaskOptions{Browser: bo})
	if err != nil {
		t.Fatalf("%s: %v", res.Status, err)
	}
	return res
}

func logResult(t *testing.T, res agent.Result) {
	t.Helper()
	for _, s := range res.Steps {
		line := s.Action
		if s.Target != "" {
			line += " on " + s.Target
		}
		t.Logf("step %d  %s  → %s  %s  (%s)", s.N, line, s.Outcome, s.Verdict, s.Why)
	}
	t.Logf("plan %q", res.Plan)
	t.Logf("%s: %s; answer %q", res.Status, res.Reason, res.Answer)
}

// timings are the fields that differ from run to run by the clock alone.
var timings = map[string]bool{"latency_ms": true, "admitted_at": true, "sent_at": true, "send_by": true, "elapsed_ms": true,
	"agent_ms": true, "model_ms": true, "peak_rss_mb": true, "chrome_peak_rss_mb": true}

// untimed is the result as JSON values, less its timings.
func untimed(t *testing.T, res agent.Result) any {
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if timings[k] {
					delete(v, k)
				} else {
					strip(x)
				}
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	return v
}
