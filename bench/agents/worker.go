package agents

import (
	"context"
	"fmt"
	"sync"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/llm"
)

// Work runs the tasks at once in this process, as one process of the
// benchmark's fleet does: each with a Chromium of its own, all through
// one caller, so that they share one budget client as the fleet's
// processes share the store. A task's error is said in its result, and
// joined with the agent's number into errs, in order.
func Work(ctx context.Context, caller *llm.Caller, tasks []*agent.Task) (results []agent.Result, errs []error) {
	results = make([]agent.Result, len(tasks))
	errs = make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() {
			// This process is the agents': Chrome's helpers are its to reap.
			// Its own peak memory is shared by its agents.
			res, err := agent.RunTask(ctx, task, agent.TaskOptions{Caller: caller, Browser: browser.Options{ReapHelpers: true}})
			results[i] = res
			if err != nil {
				errs[i] = fmt.Errorf("agent %d (%s): %w", i, task.Name, err)
			}
		})
	}
	wg.Wait()
	return results, errs
}
