package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

const fanoutScript = "ecs/fanout.sh"

// fanoutEnv is the environment with none of the script's own variables
// and a PATH of dir and the few commands the script uses besides bash
// builtins (awk, sleep, and date where bash is older than 5), so no aws
// is found unless dir holds one.
func fanoutEnv(t *testing.T, dir string) []string {
	t.Helper()
	tools := t.TempDir()
	for _, name := range []string{"awk", "sleep", "date"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s", name)
		}
		if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ECS_") || strings.HasPrefix(kv, "FANOUT_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+dir+string(os.PathListSeparator)+tools)
}

func needBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	return bash
}

var fanoutArgs = []string{
	"--cluster", "fleet", "--task-definition", "headroom:3",
	"--subnets", "subnet-aaa,subnet-bbb", "--security-groups", "sg-ccc",
	"--count", "3", "--rate", "10",
}

// splitWords splits a printed command line as bash would read it.
func splitWords(t *testing.T, bash, line string) []string {
	t.Helper()
	out, err := exec.Command(bash, "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "split", line).Output()
	if err != nil {
		t.Fatalf("bash cannot read %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// checkRunTask checks one aws ecs run-task command line and returns the
// index it starts.
func checkRunTask(t *testing.T, words []string) int {
	t.Helper()
	if len(words) < 3 || !slices.Equal(words[:3], []string{"aws", "ecs", "run-task"}) {
		t.Fatalf("%q: not aws ecs run-task", words)
	}
	opts := map[string]string{}
	rest := words[3:]
	if len(rest)%2 != 0 {
		t.Fatalf("%q: options do not come in pairs", words)
	}
	for i := 0; i < len(rest); i += 2 {
		if !strings.HasPrefix(rest[i], "--") {
			t.Fatalf("%q: %q is not an option", words, rest[i])
		}
		opts[rest[i]] = rest[i+1]
	}
	for k, want := range map[string]string{
		"--cluster": "fleet", "--task-definition": "headroom:3", "--launch-type": "FARGATE", "--count": "1",
		"--network-configuration": "awsvpcConfiguration={subnets=[subnet-aaa,subnet-bbb],securityGroups=[sg-ccc],assignPublicIp=DISABLED}",
	} {
		if opts[k] != want {
			t.Errorf("%s %q: want %q", k, opts[k], want)
		}
	}
	// The overrides are the SDK's TaskOverride, exactly.
	dec := json.NewDecoder(strings.NewReader(opts["--overrides"]))
	dec.DisallowUnknownFields()
	var o ecstypes.TaskOverride
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("--overrides %q: %v", opts["--overrides"], err)
	}
	if len(o.ContainerOverrides) != 1 || aws.ToString(o.ContainerOverrides[0].Name) != containerName {
		t.Fatalf("--overrides %q: want one override, of container %s", opts["--overrides"], containerName)
	}
	env := o.ContainerOverrides[0].Environment
	if len(env) != 1 || aws.ToString(env[0].Name) != "HEADROOM_TASK_INDEX" {
		t.Fatalf("--overrides %q: want HEADROOM_TASK_INDEX alone", opts["--overrides"])
	}
	i, err := strconv.Atoi(aws.ToString(env[0].Value))
	if err != nil {
		t.Fatalf("HEADROOM_TASK_INDEX %q", aws.ToString(env[0].Value))
	}
	return i
}

func TestFanoutDryRun(t *testing.T) {
	bash := needBash(t)
	cmd := exec.Command(bash, append([]string{fanoutScript, "--dry-run"}, fanoutArgs...)...)
	// No aws on the PATH: a dry run needs none.
	cmd.Env = fanoutEnv(t, t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 commands, got %d:\n%s", len(lines), out)
	}
	for i, line := range lines {
		if got := checkRunTask(t, splitWords(t, bash, line)); got != i {
			t.Errorf("command %d starts index %d", i, got)
		}
	}
}

// fakeAWS writes an aws command that records its arguments, one file a
// call, and answers as run-task does: the task's ARN, or no task and the
// reason for index 1. It uses shell builtins alone (the PATH has little).
func fakeAWS(t *testing.T) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	if err := os.Mkdir(calls, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
n=0
while [ -e "` + calls + `/$n" ]; do n=$((n + 1)); done
printf '%s\0' "$@" > "` + calls + `/$n"
case "$*" in
*'"value":"1"'*) printf 'None\tRESOURCE:ENI\n' ;;
*) printf 'arn:aws:ecs:us-east-1:123456789012:task/fleet/%s\tNone\n' "$n" ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "aws"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, calls
}

// A real run makes the calls the dry run prints, paced at the rate, and
// reports the index that did not start.
func TestFanoutRuns(t *testing.T) {
	bash := needBash(t)
	dir, calls := fakeAWS(t)

	dry := exec.Command(bash, append([]string{fanoutScript, "--dry-run"}, fanoutArgs...)...)
	dry.Env = fanoutEnv(t, dir)
	printed, err := dry.Output()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bash, append([]string{fanoutScript}, fanoutArgs...)...)
	cmd.Env = fanoutEnv(t, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("got %v, want exit status 1 for the task that did not start: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "indexes 1\n") || !strings.Contains(stderr.String(), "RESOURCE:ENI") {
		t.Errorf("stderr does not name index 1 and why:\n%s", stderr.String())
	}
	// Three tasks at 10 a second: the third starts 0.2 s after the first.
	if elapsed < 190*time.Millisecond {
		t.Errorf("three starts at 10 a second took %v: not paced", elapsed)
	}

	lines := strings.Split(strings.TrimSpace(string(printed)), "\n")
	for i, line := range lines {
		got, err := os.ReadFile(filepath.Join(calls, strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		args := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
		want := splitWords(t, bash, line)[1:] // without "aws"
		if !slices.Equal(args, want) {
			t.Errorf("call %d: ran %q, the dry run printed %q", i, args, want)
		}
	}
	if n, _ := os.ReadDir(calls); len(n) != len(lines) {
		t.Errorf("%d calls, %d printed", len(n), len(lines))
	}
}

func TestFanoutShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("no shellcheck")
	}
	if out, err := exec.Command(sc, fanoutScript).CombinedOutput(); err != nil {
		t.Errorf("shellcheck %s: %v\n%s", fanoutScript, err, out)
	}
}

func TestFanoutUsage(t *testing.T) {
	bash := needBash(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "3", "--rate", "1"}, "no cluster"},
		{slices.Concat(fanoutArgs, []string{"--rate", "0"}), "--rate 0"},
		{slices.Concat(fanoutArgs, []string{"--count", "-1"}), "--count -1"},
		{slices.Concat(fanoutArgs, []string{"--count"}), "--count needs a value"},
		{slices.Concat(fanoutArgs, []string{"--bogus"}), "unknown argument: --bogus"},
		{fanoutArgs, "no aws"}, // not a dry run, and no aws on the PATH
	} {
		cmd := exec.Command(bash, append([]string{fanoutScript}, tc.args...)...)
		cmd.Env = fanoutEnv(t, t.TempDir())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: got %v, %s; want exit status 2 and %q", tc.args, err, out, tc.want)
		}
	}
	out, err := exec.Command(bash, fanoutScript, "--help").Output()
	if err != nil || !strings.HasPrefix(string(out), "usage: fanout.sh") {
		t.Errorf("--help: %v, %s", err, out)
	}
}
