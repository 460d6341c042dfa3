package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTaskListMixesFilesAndTasksWrittenOut(t *testing.T) {
	dir := t.TempDir()
	shop, err := os.ReadFile("../testdata/tasks/shop-sofa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sofa.yaml"), shop, 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "tasks.yaml")
	data := "tasks:\n" +
		"  - file: sofa.yaml\n" +
		"  - name: oak\n" +
		"    start_url: https://shop.example/\n" +
		"    goal: Put the oak desk in the cart.\n" +
		"    replay: oak.har\n" +
		"    max_steps: 5\n"
	if err := os.WriteFile(list, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks, err := LoadTaskList(list)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 {
		t.Fatalf("got %d tasks, want 2", len(tasks))
	}
	if tasks[0].File != filepath.Join(dir, "sofa.yaml") || tasks[0].Name == "" {
		t.Errorf("tasks[0] = %q from %s, want the task of sofa.yaml", tasks[0].Name, tasks[0].File)
	}
	if got := tasks[1]; got.Name != "oak" || got.MaxSteps != 5 || got.Replay != filepath.Join(dir, "oak.har") || got.File != list {
		t.Errorf("tasks[1] = %+v, want oak with its replay beside the list", got)
	}
}

func TestTaskListErrorsNameTheEntryAndLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nstart_url: ftp://x/\ngoal: g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := "    start_url: https://a.example/\n    goal: g\n"
	for _, c := range []struct{ name, data, want string }{
		{"empty", "tasks: []\n", "tasks.yaml:1: tasks: a task list needs tasks"},
		{"no tasks key", "task: []\n", `unknown field`},
		{"unknown field", "tasks:\n  - name: a\n" + task + "    goall: x\n", "tasks.yaml:5: tasks[0].goall: unknown field"},
		{"bad field", "tasks:\n  - name: a\n" + task + "  - name: b\n    start_url: nope\n    goal: g\n", "tasks.yaml:6: tasks[1].start_url: not absolute"},
		{"both", "tasks:\n  - file: a.yaml\n    name: a\n", "tasks.yaml:2: tasks[0]: an entry is a task file or a task written out, not both"},
		{"empty file", "tasks:\n  - file: \"\"\n", "tasks.yaml:2: tasks[0].file: file names a task file"},
		{"missing file", "tasks:\n  - file: gone.yaml\n", "tasks.yaml:2: tasks[0].file: "},
		{"bad file", "tasks:\n  - file: bad.yaml\n", "bad.yaml:2: start_url: scheme \"ftp\""},
		{"duplicate", "tasks:\n  - name: a\n" + task + "  - name: a\n" + task, `tasks.yaml:5: tasks[1]: task "a" is also tasks[0]`},
		{"step", "tasks:\n  - name: a\n" + task + "    steps:\n      - {}\n", "tasks[0].steps[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTaskList(filepath.Join(dir, "tasks.yaml"), []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to hold %q", err, c.want)
			}
		})
	}
}

func FuzzParseTaskList(f *testing.F) {
	f.Add([]byte("tasks:\n  - name: a\n    start_url: https://a.example/\n    goal: g\n"))
	f.Add([]byte("tasks:\n  - file: x.yaml\n"))
	f.Add([]byte("tasks:\n  - name: a\n    start_url: https://a.example/\n    goal: g\n    steps: [{agent: x}, {}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, err := ParseTaskList("tasks.yaml", data)
		if err == nil && len(tasks) == 0 {
			t.Fatal("no error and no tasks")
		}
		for _, tk := range tasks {
			if err == nil && (tk.Name == "" || tk.Goal == "") {
				t.Fatalf("accepted a task without name or goal: %+v", tk)
			}
		}
	})
}

// A fleet's container picks its task by index; one past the list, or
// below it, says what the list holds.
func TestTaskAt(t *testing.T) {
	list := filepath.Join(t.TempDir(), "tasks.yaml")
	data := "tasks:\n" +
		"  - {name: oak, start_url: https://shop.example/, goal: Put the oak desk in the cart.}\n" +
		"  - {name: elm, start_url: https://shop.example/, goal: Put the elm desk in the cart.}\n"
	if err := os.WriteFile(list, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if task, err := TaskAt(list, 1); err != nil || task.Name != "elm" {
		t.Errorf("TaskAt 1: %v, %v; want elm", task, err)
	}
	for i, want := range map[int]string{2: "holds 2 tasks, indexes 0 to 1", -1: "-1 is not an index"} {
		if _, err := TaskAt(list, i); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("TaskAt %d: %v, want %q", i, err, want)
		}
	}
}
