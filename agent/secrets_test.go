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
		{"an address as a number", secretTask + "secrets:\n  pw: {env: A, domains: [127.1]}\n", `t.yaml:5: secrets.pw.domains[0]: "127.1" is read by a browser as the IP address 127.0.0.1: write the address in full, as 127.0.0.1`},
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
	for v, why := range map[string]string{"123": "3 characters", "a b\u200bc": "3 characters", "acted]": "part of [redacted]"} {
		t.Setenv("TASK_PW", v)
		if _, err := task.BrowserSecrets(); err == nil || !strings.Contains(err.Error(), "secrets.pw: the value cannot be kept out of every output") || !strings.Contains(err.Error(), why) {
			t.Errorf("value %q: %v", v, err)
		}
	}
	t.Setenv("TASK_PW", "canary-pw-5531")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := task.BrowserSecrets(); err == nil || !strings.Contains(err.Error(), "secrets.user") || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: %v", err)
	}
}

// A value that holds a placeholder is refused when the secrets are read,
// as bad usage naming the task file and the secret, and never shown.
func TestTaskSecretHoldingAPlaceholderIsRefusedWhenRead(t *testing.T) {
	task, err := agent.ParseTask("t.yaml", []byte(secretTask+"secrets:\n  pw: {env: TASK_PW}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"canary<secret:pw>9931", "<secret:canary-9931", "canary-9931<secret:"} {
		t.Setenv("TASK_PW", v)
		_, err := task.BrowserSecrets()
		if !errors.Is(err, agent.ErrUsage) || !strings.Contains(err.Error(), `t.yaml: secrets.pw: the value holds "<secret:"`) {
			t.Errorf("a value holding a placeholder: %v", err)
		}
		if err != nil && strings.Contains(err.Error(), "canary") {
			t.Errorf("the error shows the value: %v", err)
		}
	}
	t.Setenv("TASK_PW", "canary<secret-9931>")
	if _, err := task.BrowserSecrets(); err != nil {
		t.Errorf("a value with '<secret' but no placeholder: %v", err)
	}
}
