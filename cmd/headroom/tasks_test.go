package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// A fleet's task list: every container runs the same command, and the
// index its engine gives it picks its task.
func TestRunPicksTaskByIndex(t *testing.T) {
	t.Parallel()
	srv := animalSite(t)
	dir := t.TempDir()
	writeFile(t, dir, "zebra.yaml", zebraTask(srv.URL))
	list := writeFile(t, dir, "tasks.yaml", fmt.Sprintf(`tasks:
  - file: zebra.yaml
  - name: library-hours
    start_url: %s/
    goal: Open the opening hours and tell when the library opens.
    max_steps: 6
`, srv.URL))
	// Kubernetes' index wins over the fan-out's, which a pod would not set.
	r := runBinary(t, []string{envJobIndex + "=1", envTaskIndex + "=0"}, "run", "--tasks", list)
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if res := decodeResult(t, "stdout", []byte(r.stdout)); res.Task != "library-hours" {
		t.Errorf("ran %q, want library-hours (index 1)", res.Task)
	}
	r = runBinary(t, []string{envJobIndex + "=1"}, "run", "--tasks", list, "--index", "0")
	if res := decodeResult(t, "stdout", []byte(r.stdout)); r.code != exitOK || res.Task != "zebra-sleep" {
		t.Errorf("--index 0: exit %d, ran %q; want 0 and zebra-sleep (the flag wins)\nstderr:\n%s", r.code, res.Task, r.stderr)
	}
}

func TestRunTaskListUsage(t *testing.T) {
	dir := t.TempDir()
	task := writeFile(t, dir, "a.yaml", zebraTask("http://127.0.0.1:9"))
	list := writeFile(t, dir, "tasks.yaml", "tasks:\n  - file: a.yaml\n  - file: a.yaml\n")
	one := writeFile(t, dir, "one.yaml", "tasks:\n  - file: a.yaml\n")
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no index", nil, []string{"--tasks", one}, "needs the index of the task to run: --index N, or JOB_COMPLETION_INDEX or HEADROOM_TASK_INDEX"},
		{"past the end", map[string]string{envJobIndex: "1"}, []string{"--tasks", one}, "$JOB_COMPLETION_INDEX=1: " + one + " holds 1 task, indexes 0 to 0"},
		{"not a number", map[string]string{envTaskIndex: "one"}, []string{"--tasks", one}, `$HEADROOM_TASK_INDEX="one" is not an index`},
		{"negative", nil, []string{"--tasks", one, "--index", "-1"}, `--index="-1" is not an index`},
		{"both", nil, []string{"--tasks", one, "--index", "0", task}, "want one TASK file, or --tasks FILE"},
		{"index of one task", nil, []string{"--index", "0", task}, "--index picks a task of --tasks FILE"},
		{"duplicate names", nil, []string{"--tasks", list, "--index", "0"}, `tasks.yaml:3: tasks[1]: task "zebra-sleep" is also tasks[0]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envJobIndex, "")
			t.Setenv(envTaskIndex, "")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"run"}, c.args...), &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q", out.String())
			}
		})
	}
}
