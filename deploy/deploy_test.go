package deploy

import (
	"testing"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/config"
)

// The container contract the manifests are written for.
const (
	containerName = "headroom"
	nonRootUID    = 10001
	// headroom stops within about 10 s of SIGTERM; the grace period must
	// leave it that and some.
	minGrace = 15
	// Fargate refuses a stopTimeout above 120 s.
	maxStopTimeout = 120
	exitBadUsage   = 2
)

// runArgs checks the arguments are run --tasks FILE ... --out DIR and
// returns FILE and DIR.
func runArgs(t *testing.T, args []string) (tasks, out string) {
	t.Helper()
	if len(args) < 3 || args[0] != "run" || args[1] != "--tasks" {
		t.Fatalf("arguments %q: want run --tasks FILE ...", args)
	}
	for i := 1; i+1 < len(args); i++ {
		if args[i] == "--out" {
			out = args[i+1]
		}
	}
	return args[2], out
}

// configEnv parses a fleet's config with the project's own parser and
// returns the environment variables it reads: the Redis URL's and the
// deployments' keys'.
func configEnv(t *testing.T, name string, data []byte) []string {
	t.Helper()
	cfg, _, err := config.Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	// The fleet's config names the variable that holds the Redis URL, so
	// a password can come from a secret; a literal URL here would be one
	// written into a ConfigMap.
	b := cfg.Budget
	if b.RedisEnv == "" || b.Redis != "" {
		t.Errorf("%s: want redis_env (the URL from the environment) and no redis", name)
	}
	if len(b.Deployments) == 0 {
		t.Fatalf("%s: no deployments", name)
	}
	needs := []string{b.RedisEnv}
	for _, d := range b.Deployments {
		if d.Auth.APIKeyEnv != "" {
			needs = append(needs, d.Auth.APIKeyEnv)
		}
	}
	return needs
}

// parseTasks parses a task list (--tasks FILE) with the parser headroom
// run uses, so an unknown field, a bad URL or a missing goal fails here as
// it would in a container.
func parseTasks(t *testing.T, name string, data []byte) []*agent.Task {
	t.Helper()
	tasks, err := agent.ParseTaskList(name, data)
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range tasks {
		if task.Replay != "" || task.Cassette != "" {
			t.Errorf("%s: tasks[%d]: replay and cassette name files the pod does not have", name, i)
		}
	}
	return tasks
}
