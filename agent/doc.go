// Package agent runs browser tasks. A task file (LoadTask, LoadTaskList)
// says where to start, what to reach, which domains the browser may touch,
// and its bounds: steps, tokens, a deadline, a success check. A task may
// declare parameters, written {{name}} in its goal, steps and success
// check, which Task.Bind (or TaskOptions.Params) fills in for a run.
// RunTask runs one with a single call:
//
//	t, err := agent.LoadTask("testdata/tasks/shop-cheapest-desk.yaml")
//	res, err := agent.RunTask(ctx, t, agent.TaskOptions{})
//
// It keeps the task's promises itself: the browser fenced to the task's
// allowed domains (the start URL's host when it names none), its replay
// and cassette answered offline, the embedded default for a model when no
// config is given, and result.json, report.html and screenshots written
// when TaskOptions.OutDir is set. Run is the step loop beneath it, for a
// caller that opens its own page and caller: observe the page, plan, pick
// an action, take it, check the goal, and summarize; it refuses a page
// fenced wider than the task.
//
// With a store of learned runs (TaskOptions.Learned, OpenLearned), a run
// whose success check passed is kept as learned steps, and a later run of
// the same task template follows them with no model call, finding each
// element again by its role, name and row, until the page stops fitting
// them; the model then takes over, and its verified run heals the entry.
//
// Every call goes through llm.Call with its type's cap, so the budget sees
// a pessimistic cost before dispatch. The result says how the run ended
// and, for a success, how that is known (SuccessBy); ExitCode maps a
// result and its error to the process's exit code by one table
// (ExitCauses). The package knows the browser and the caller's
// interfaces, never Azure or Redis. Built with -tags nosim, it links
// neither the simulator nor the word-matching stand-in of the embedded
// default, and a task then needs a config or a cassette.
package agent
