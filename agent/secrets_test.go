package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/internal/redact"
)

const secretTask = "name: s\nstart_url: http://127.0.0.1:8391/\ngoal: Sign in with <secret:pw>.\n"

func TestTaskSecretsAreCheckedAtTheirLine(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no source", secretTask + "secrets:\n  pw: {domains: [127.0.0.1]}\n", "t.yaml:5: secrets.pw: a secret comes from env: VAR or from file: PATH"},
		{"two sources", secretTask + "secrets:\n  pw: {env: A, file: /b}\n", "secrets.pw: a secret comes from env"},
		{"bad name", "name: s\nstart_url: http://127.0.0.1:8391/\ngoal: g\nsecrets:\n  \"p w\": {env: A}\n", "is not a secret name"},
		{"bad domain", secretTask + "secrets:\n  pw: {env: A, domains: [\"http://x/\"]}\n", "secrets.pw.domains[0]"},
		{"undeclared", secretTask, "t.yaml:3: goal: <secret:pw> names no secret"},
		{"undeclared in a step", secretTask + "secrets:\n  pw: {env: A}\nsteps:\n  - type: \"#u\"\n    text: <secret:user>\n", "steps[0]: <secret:user> names no secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := agent.ParseTask("t.yaml", []byte(c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// A secret is read when the task runs: from its variable or its file,
// never empty, and a secret of the process from then on.
func TestTaskSecretsAreReadWhole(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "user")
	if err := os.WriteFile(file, []byte("canary-user-8812\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	task, err := agent.ParseTask("t.yaml", []byte(secretTask+"secrets:\n  pw: {env: TASK_PW, domains: [127.0.0.1]}\n  user: {file: "+file+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := task.BrowserSecrets(); !errors.Is(err, agent.ErrUsage) || !strings.Contains(err.Error(), "secrets.pw: $TASK_PW is not set") {
		t.Errorf("unset variable: %v", err)
	}
	t.Setenv("TASK_PW", "canary-pw-5531")
	got, err := task.BrowserSecrets()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "pw" || got[0].Value != "canary-pw-5531" || got[0].Domains[0] != "127.0.0.1" || got[1].Value != "canary-user-8812" {
		t.Errorf("secrets %+v", got)
	}
	if s := redact.Text("pw canary-pw-5531 user canary-user-8812"); strings.Contains(s, "canary") {
		t.Errorf("the values are not secrets of the process: %q", s)
	}
	t.Setenv("TASK_PW", "123")
	if _, err := task.BrowserSecrets(); err == nil || !strings.Contains(err.Error(), "secrets.pw: the value is 3 bytes") {
		t.Errorf("a short value: %v", err)
	}
	t.Setenv("TASK_PW", "canary-pw-5531")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := task.BrowserSecrets(); err == nil || !strings.Contains(err.Error(), "secrets.user") || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: %v", err)
	}
}
