package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/internal/testsite"
)

func ptr(s string) *string { return &s }

// invoiceTask is a task with a parameter in every place one may go.
const invoiceTask = `name: pay-invoice
start_url: https://billing.example/
goal: Pay invoice {{invoice}}.
params: {invoice: INV-1042, payer: ~}
steps:
  - type: "#search"
    text: "{{invoice}}"
    submit: true
  - click: "//a[contains(., '{{invoice}}')]"
  - select: "#payer"
    option: "{{payer}}"
  - navigate: /pay/{{invoice}}
  - scroll: "#row-{{invoice}}"
  - expect: Invoice {{invoice}}
  - agent: pay invoice {{invoice}} as {{payer}}
success: {text: "Paid {{invoice}}.", url: "/paid/{{invoice}}$"}
`

func TestParamsLoadErrorsNameFileLineAndField(t *testing.T) {
	head := "name: n\nstart_url: https://example.com/\n"
	for _, c := range []struct{ name, src, want string }{
		{"undeclared", head + "goal: Pay invoice {{invoice}}.\n",
			"t.yaml:3: goal: uses {{invoice}}, which params does not declare"},
		{"undeclared in a step", head + "goal: g\nparams: {a: x}\nsteps:\n  - click: \"#{{b}}\"\n",
			"t.yaml:6: steps[0].click: uses {{b}}, which params does not declare"},
		{"undeclared in success", head + "goal: g\nsuccess: {url: \"/{{id}}\"}\n",
			"t.yaml:4: success.url: uses {{id}}, which params does not declare"},
		{"bad name in use", head + "goal: Pay {{in voice}}.\n",
			`t.yaml:3: goal: "{{in voice}}" is not a parameter`},
		{"unclosed", head + "goal: Pay {{invoice.\nparams: {invoice: x}\n",
			"t.yaml:3: goal: {{ is not closed"},
		{"unclosed in text", head + "goal: g\nparams: {a: x}\nsteps:\n  - type: \"#q\"\n    text: \"{{a\"\n",
			"t.yaml:7: steps[0].text: {{ is not closed"},
		{"bad declared name", head + "goal: g\nparams: {9lives: x}\n",
			`t.yaml:4: params: "9lives" is not a parameter name`},
		{"long name", head + "goal: g\nparams: {" + strings.Repeat("a", 65) + ": x}\n",
			"is not a parameter name"},
		{"default with {{", head + "goal: g\nparams:\n  a: \"{{b}}\"\n",
			"t.yaml:5: params.a: the value holds {{"},
		{"default with a placeholder", head + "goal: g\nparams:\n  a: \"<secret:pw>\"\n",
			`t.yaml:5: params.a: the value holds "<secret:"`},
		{"default with a newline", head + "goal: g\nparams:\n  a: \"x\\ny\"\n",
			"t.yaml:5: params.a: the value holds a control character"},
		{"default too long", head + "goal: g\nparams:\n  a: " + strings.Repeat("x", 1001) + "\n",
			"t.yaml:5: params.a: the value is 1001 bytes, over the limit of 1000"},
		{"in start_url", "name: n\nstart_url: https://example.com/{{a}}\ngoal: g\nparams: {a: x}\n",
			"t.yaml:2: start_url: holds {{, and parameters are not put in here"},
		{"in a wait", head + "goal: g\nparams: {a: x}\nsteps:\n  - wait: \"{{a}}\"\n",
			"t.yaml:6: steps[0].wait: holds {{"},
		{"in a screenshot", head + "goal: g\nparams: {a: x}\nsteps:\n  - screenshot: \"{{a}}.png\"\n",
			"t.yaml:6: steps[0].screenshot: holds {{"},
		{"learn", head + "goal: g\nlearn: never\n",
			`t.yaml:4: learn: "never": write "off"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTask("t.yaml", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", err, c.want)
			}
			if !errors.Is(err, ErrUsage) && ExitCode(context.Background(), "", err) != ExitUsage {
				t.Errorf("exit %d, want %d", ExitCode(context.Background(), "", err), ExitUsage)
			}
		})
	}
}

func TestParamsLoad(t *testing.T) {
	task, err := ParseTask("t.yaml", []byte(invoiceTask+"learn: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*string{"invoice": ptr("INV-1042"), "payer": nil}
	if !reflect.DeepEqual(task.Params, want) || task.Learn != LearnOff {
		t.Errorf("params %v, learn %q", task.Params, task.Learn)
	}
	if task.Bound() != nil || task.Template() != task {
		t.Errorf("a task loaded is its own template, not bound: %v", task.Bound())
	}
	// A number is taken as written: YAML would read 0042 as octal.
	task, err = ParseTask("t.yaml", []byte("name: n\nstart_url: https://example.com/\ngoal: Pay {{n}} for {{x}}.\nparams: {n: 0042, x: 1.50}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *task.Params["n"] != "0042" || *task.Params["x"] != "1.50" {
		t.Errorf("defaults %q %q, want 0042 and 1.50 as written", *task.Params["n"], *task.Params["x"])
	}
	// A literal brace or two is no parameter.
	if _, err := ParseTask("t.yaml", []byte("name: n\nstart_url: https://example.com/\ngoal: Count the { and }} signs.\nsuccess: {url: \"/a{2}$\"}\n")); err != nil {
		t.Errorf("lone braces: %v", err)
	}
}

func TestBind(t *testing.T) {
	task, err := ParseTask("t.yaml", []byte(invoiceTask))
	if err != nil {
		t.Fatal(err)
	}
	b, err := task.Bind(map[string]string{"payer": "Ada Lovelace"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Goal != "Pay invoice INV-1042." || b.Success.Text != "Paid INV-1042." || b.Success.URL != `/paid/INV-1042$` {
		t.Errorf("bound with the default: goal %q, success %+v", b.Goal, *b.Success)
	}
	s := b.Steps
	if s[0].Text != "INV-1042" || s[1].Click != "//a[contains(., 'INV-1042')]" || s[2].Option != "Ada Lovelace" ||
		s[3].Navigate != "/pay/INV-1042" || s[4].Scroll != "#row-INV-1042" || s[5].Expect != "Invoice INV-1042" ||
		s[6].Agent != "pay invoice INV-1042 as Ada Lovelace" || s[0].Type != "#search" {
		t.Errorf("steps bound: %+v", s)
	}
	if want := map[string]string{"invoice": "INV-1042", "payer": "Ada Lovelace"}; !reflect.DeepEqual(b.Bound(), want) {
		t.Errorf("Bound() = %v, want %v", b.Bound(), want)
	}
	// The template is the task as written, untouched by the binding.
	if tm := b.Template(); tm.Goal != "Pay invoice {{invoice}}." || tm.Steps[0].Text != "{{invoice}}" || tm.Bound() != nil ||
		task.Goal != "Pay invoice {{invoice}}." || task.Success.Text != "Paid {{invoice}}." {
		t.Errorf("template goal %q, the task's %q", tm.Goal, task.Goal)
	}

	// A value given wins over the default; binding again starts from the
	// template, so nothing of the first binding stays.
	again, err := b.Bind(map[string]string{"invoice": "INV-7", "payer": "Bo"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Goal != "Pay invoice INV-7." || again.Steps[6].Agent != "pay invoice INV-7 as Bo" || again.Template().Goal != task.Goal {
		t.Errorf("bound again: %q, %q", again.Goal, again.Steps[6].Agent)
	}
	if b.Goal != "Pay invoice INV-1042." {
		t.Errorf("binding again changed the first copy: %q", b.Goal)
	}

	for _, c := range []struct {
		name   string
		values map[string]string
		want   string
	}{
		{"unknown", map[string]string{"payer": "x", "invoce": "1"}, `t.yaml: unknown parameter "invoce": the task declares invoice, payer`},
		{"missing", nil, `t.yaml: parameter "payer" has no value: give --param payer=VALUE`},
		{"newline", map[string]string{"payer": "a\nb"}, `parameter "payer": the value holds a control character`},
		{"braces", map[string]string{"payer": "{{invoice}}"}, `the value holds {{`},
		{"placeholder", map[string]string{"payer": "<secret:pw>"}, `begins a secret's placeholder`},
		{"too long", map[string]string{"payer": strings.Repeat("x", 1001)}, `over the limit of 1000`},
		{"empty option", map[string]string{"payer": "", "invoice": "x"}, `steps[2].option: empty once {{payer}} is put in`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := task.Bind(c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", err, c.want)
			}
			if !errors.Is(err, ErrUsage) || ExitCode(context.Background(), Errored, err) != ExitUsage {
				t.Errorf("%v is not bad usage", err)
			}
		})
	}

	// A task without parameters binds to itself.
	plain := &Task{Name: "plain", StartURL: "https://example.com/", Goal: "g"}
	if _, err := plain.Bind(map[string]string{"a": "b"}); err == nil || !strings.Contains(err.Error(), "the task declares no parameters") {
		t.Errorf("a value for a task with none: %v", err)
	}
	pb, err := plain.Bind(nil)
	if err != nil || pb.Goal != "g" || pb.Bound() == nil || len(pb.Bound()) != 0 {
		t.Errorf("Bind(nil) = %+v, %v", pb, err)
	}
	// A task built in Go is checked as a file is.
	built := &Task{Name: "built", StartURL: "https://example.com/", Goal: "Pay {{invoice}}."}
	if _, err := built.Bind(nil); err == nil || !strings.Contains(err.Error(), "built: goal: uses {{invoice}}, which params does not declare") {
		t.Errorf("undeclared in a task built in Go: %v", err)
	}
}

// In success.url, a regular expression, a value matches as written.
func TestBindQuotesValuesInTheSuccessURL(t *testing.T) {
	task, err := ParseTask("t.yaml", []byte("name: n\nstart_url: https://example.com/\ngoal: Open {{page}}.\nparams: {page: ~}\nsuccess: {url: \"/docs/{{page}}$\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := task.Bind(map[string]string{"page": "a.b"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Success.URL != `/docs/a\.b$` {
		t.Errorf("success.url %q", b.Success.URL)
	}
	if !b.Success.url.MatchString("https://example.com/docs/a.b") || b.Success.url.MatchString("https://example.com/docs/aXb") {
		t.Errorf("%q must match a.b alone", b.Success.URL)
	}
	// The text is not a pattern: it goes in as it is.
	b, err = task.Bind(map[string]string{"page": "(x"})
	if err != nil || b.Success.url == nil || !b.Success.url.MatchString("/docs/(x") {
		t.Errorf("a value that is not a pattern: %v", err)
	}
}

func TestTaskListEntriesGiveValues(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pay.yaml"), []byte(invoiceTask), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "tasks.yaml")
	tasks, err := ParseTaskList(list, []byte(`tasks:
  - file: pay.yaml
    params: {payer: Ada}
  - file: pay.yaml
    params: {invoice: INV-1043, payer: Ada}
  - file: pay.yaml
    params: {invoice: INV 1043, payer: Ada}
  - file: pay.yaml
    params: {invoice: INV/1043, payer: Ada}
  - file: pay.yaml
  - name: written
    start_url: https://example.com/
    goal: Find {{what}}.
    params: {what: tea}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range tasks {
		names = append(names, tk.Name)
	}
	want := []string{"pay-invoice-Ada", "pay-invoice-INV-1043-Ada", "pay-invoice-INV_1043-Ada", "pay-invoice-INV_1043-Ada-3", "pay-invoice", "written"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	// The values go in at the run, with any given then: the entry's win.
	b, err := tasks[1].Bind(map[string]string{"invoice": "INV-9", "payer": "Bo"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Goal != "Pay invoice INV-1043." || b.Steps[6].Agent != "pay invoice INV-1043 as Ada" || b.Name != "pay-invoice-INV-1043-Ada" {
		t.Errorf("entry bound: %q %q %q", b.Name, b.Goal, b.Steps[6].Agent)
	}
	if tm := b.Template(); tm.Name != "pay-invoice" || tm.Goal != "Pay invoice {{invoice}}." || tasks[1].Template() != tm {
		t.Errorf("the template of an entry is the file's task: %q %q", tm.Name, tm.Goal)
	}
	if b, err := tasks[0].Bind(nil); err != nil || b.Goal != "Pay invoice INV-1042." {
		t.Errorf("default beside the entry's value: %v", err)
	}
	if tasks[0].Bound() != nil {
		t.Error("a list entry is bound at the run, not when read")
	}
	if _, err := tasks[4].Bind(nil); err == nil || !strings.Contains(err.Error(), `parameter "payer" has no value`) {
		t.Errorf("an entry with no value for payer: %v", err)
	}
	if b, err := tasks[5].Bind(nil); err != nil || b.Goal != "Find tea." {
		t.Errorf("a task written out binds its defaults: %v", err)
	}

	for _, c := range []struct{ name, data, want string }{
		{"unknown", "tasks:\n  - file: pay.yaml\n    params: {invoce: 1}\n",
			`tasks.yaml:3: tasks[0].params.invoce: unknown parameter "invoce": the task declares invoice, payer`},
		{"null", "tasks:\n  - file: pay.yaml\n    params:\n      payer:\n",
			`tasks.yaml:4: tasks[0].params.payer: no value`},
		{"bad value", "tasks:\n  - file: pay.yaml\n    params: {payer: \"<secret:x>\"}\n",
			`tasks.yaml:3: tasks[0].params.payer: the value holds "<secret:"`},
		{"other fields", "tasks:\n  - file: pay.yaml\n    params: {payer: a}\n    max_steps: 3\n",
			`tasks.yaml:2: tasks[0]: an entry is a task file or a task written out, not both`},
		{"same values twice", "tasks:\n  - file: pay.yaml\n    params: {payer: a}\n  - file: pay.yaml\n    params: {payer: a}\n  - file: pay.yaml\n    params: {payer: a}\n",
			""},
		{"written out undeclared", "tasks:\n  - name: w\n    start_url: https://example.com/\n    goal: Find {{what}}.\n",
			`tasks.yaml:4: tasks[0].goal: uses {{what}}, which params does not declare`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tasks, err := ParseTaskList(list, []byte(c.data))
			if c.want == "" {
				// Entries alike are told apart by their place.
				if err != nil || tasks[1].Name != "pay-invoice-a-1" || tasks[2].Name != "pay-invoice-a-2" {
					t.Errorf("%v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", err, c.want)
			}
		})
	}
}

// RunTask puts the values in before anything opens, and the result says
// which it ran with. The task is feed-members as a template, on its
// recording.
func TestRunTaskWithParams(t *testing.T) {
	har, err := filepath.Abs(filepath.Join(testsite.Dir(), "..", "tasks", "feed-members.har"))
	if err != nil {
		t.Fatal(err)
	}
	src := `name: feed-count
start_url: http://127.0.0.1:8391/feed/
goal: Report how many {{who}} there are and how many are online.
params: {who: ~}
allowed_domains: [127.0.0.1]
max_steps: 4
deadline: 2m
success: {text: "12 {{who}}, 3 online", url: "/{{path}}"}
replay: ` + har + "\n"
	src = strings.Replace(src, "params: {who: ~}", "params: {who: ~, path: feed/}", 1)
	task, err := ParseTask(filepath.Join(t.TempDir(), "feed.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A parameter without a value stops the run before a browser opens.
	res, err := RunTask(ctx, task, TaskOptions{})
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `parameter "who" has no value`) || res.Status != Errored {
		t.Fatalf("no value: %s, %v", res.Status, err)
	}
	if _, err := RunTask(ctx, task, TaskOptions{Params: map[string]string{"whom": "x"}}); !errors.Is(err, ErrUsage) {
		t.Fatalf("unknown: %v", err)
	}

	chrometest.Require(t)
	res, err = RunTask(ctx, task, TaskOptions{Params: map[string]string{"who": "members"}})
	if err != nil || res.Status != Succeeded || res.SuccessBy != SuccessChecked {
		t.Fatalf("%s (%s): %v", res.Status, res.Reason, err)
	}
	if want := map[string]string{"who": "members", "path": "feed/"}; !reflect.DeepEqual(res.Params, want) {
		t.Errorf("result params %v, want %v", res.Params, want)
	}
	if !strings.Contains(res.Reason, `shows "12 members, 3 online"`) {
		t.Errorf("reason %q: want the check with its values", res.Reason)
	}
}
