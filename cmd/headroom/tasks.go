package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/headroom-agent/headroom/agent"
)

// The environment variables a container engine gives each member of a
// fleet its index in: Kubernetes sets the first on an indexed Job's pods;
// the second is for engines with no index of their own (ECS, whose
// fan-out sets it per task).
const (
	envJobIndex  = "JOB_COMPLETION_INDEX"
	envTaskIndex = "HEADROOM_TASK_INDEX"
)

// pickTask loads the task list and returns the task at index (the flag's
// value), or at the index the environment gives.
func pickTask(file, index string) (*agent.Task, error) {
	from := "--index"
	if index == "" {
		switch {
		case os.Getenv(envJobIndex) != "":
			from, index = "$"+envJobIndex, os.Getenv(envJobIndex)
		case os.Getenv(envTaskIndex) != "":
			from, index = "$"+envTaskIndex, os.Getenv(envTaskIndex)
		default:
			return nil, fmt.Errorf("--tasks %s needs the index of the task to run: --index N, or %s or %s in the environment", file, envJobIndex, envTaskIndex)
		}
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return nil, fmt.Errorf("%s=%q is not an index: want 0, 1, 2 …", from, index)
	}
	t, err := agent.TaskAt(file, i)
	if err != nil {
		return nil, fmt.Errorf("%s=%d: %w", from, i, err)
	}
	return t, nil
}
