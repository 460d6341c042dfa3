package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"io"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/internal/yamlconf"
	"github.com/headroom-agent/headroom/llm"
)

// runTask runs one agent on a task file and prints its result: the
// product's main job, one per container.
func runTask(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	outDir := fs.String("out", "", "write result.json, report.html and a screenshot per step into this `directory`")
	recordHAR := fs.String("record-har", "", "record the run's pages, live, to this HAR `file` for offline replay")
	recordCalls := fs.String("record-calls", "", "record the run's model calls to this cassette `file`")
	storageState := fs.String("storage-state", "", "start with the cookies and localStorage of this `file` (Playwright's storageState format), instead of the task's storage_state")
	saveStorage := fs.String("save-storage-state", "", "after the run, write the browser's cookies and localStorage to this `file` (Playwright's format, mode 0600)")
	session := fs.String("session", "", "the session `key` the calls keep affinity by (default the task's name and a random suffix)")
	tasksFile := fs.String("tasks", "", "run one task of this task list `file` (tasks: [...]), the one at --index")
	index := fs.String("index", "", "run task `N` of --tasks, counting from 0 (default $JOB_COMPLETION_INDEX, else $HEADROOM_TASK_INDEX)")
	var params listFlag
	fs.Var(&params, "param", "give the task's parameter `NAME=VALUE` ({{NAME}} in the task); repeat for more. With --tasks, for every entry, and an entry's own value wins")
	learnedSpec := fs.String("learned", "", "where learned runs live: off, memory, dir:`PATH`, redis (the config's Redis) or redis://HOST:PORT (default the config's learned:, else off)")
	var extra listFlag
	fs.Var(&extra, "allow-extra", "let the browser reach this `domain` too, beyond the task's allowed domains (the result records it); repeat for more")
	var bf browserFlags
	bf.addBrowser(fs)
	var mf metricsFlags
	mf.add(fs)
	return func(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
		if (len(pos) != 1) == (*tasksFile == "") {
			fprintf(stderr, "headroom run: want one TASK file, or --tasks FILE with an index\n")
			hint(stderr, "run")
			return exitUsage
		}
		if _, err := bf.load(); err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		if err := checkDomains("--allow-extra", extra); err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		values, err := paramValues(params)
		var task *agent.Task
		if err == nil {
			task, err = loadRunTask(pos, *tasksFile, *index)
		}
		if err == nil {
			// Bound here, so that a parameter unknown or without a value
			// is said before anything opens.
			task, err = task.Bind(values)
		}
		if err == nil {
			err = checkRecording(task, *recordHAR, *recordCalls, *saveStorage)
		}
		if err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		cfg, ok := loadConfig("run", *configFile, stderr)
		if !ok {
			return exitUsage
		}
		opts := agent.TaskOptions{
			Config: cfg, LLM: llm.Options{Record: *recordCalls},
			Browser: bf.options(stderr), AllowExtra: domains(extra),
			OutDir: *outDir, Session: *session, Progress: stderr,
			StorageState: *storageState, SaveStorageState: *saveStorage,
		}
		// This process is the agent's: Chrome's helpers are its to reap.
		opts.Browser.ReapHelpers = true
		var rec *replay.Recorder
		if *recordHAR != "" {
			rec = replay.NewRecorder(time.Now().UTC().Truncate(time.Second), replay.DefaultRedactor(), "headroom", versionString())
			opts.Browser.Record = rec
		}
		// Opened here rather than by RunTask only so that the metrics can
		// watch it while the task runs.
		caller, err := agent.OpenCaller(ctx, task, opts)
		if err != nil {
			return failed(ctx, stderr, "run", err)
		}
		defer func() {
			if err := caller.Close(); err != nil {
				fprintf(stderr, "headroom run: closing the caller: %v\n", err)
			}
		}()
		opts.Caller = caller
		lib, err := agent.OpenLearned(ctx, *learnedSpec, cfg)
		if err != nil {
			return failed(ctx, stderr, "run", fmt.Errorf("--learned: %w", err))
		}
		if lib != nil {
			defer lib.Close()
			opts.Learned = lib
		}
		mf.stderr = stderr
		stopMetrics, err := mf.start(learnedSource(callerSource(caller), lib, task.Name), stdout)
		defer stopMetrics() // first: the last EMF lines are written while the store is open
		if err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}

		res, runErr := agent.RunTask(ctx, task, opts)
		stopMetrics() // the run's last figures, SIGTERM or not
		reportFence(stderr, "run", res.Refused, res.ClosedTabs, bf.verbose)
		code := agent.ExitCode(ctx, res.Status, runErr)
		if rec != nil && rec.Len() > 0 {
			// Even a run that failed or was stopped recorded what it saw.
			if err := rec.Archive().WriteFile(*recordHAR); err != nil {
				fprintf(stderr, "headroom run: --record-har: %v\n", err)
				code = max(code, exitFailed)
			}
		}
		oe := (*agent.OutputError)(nil)
		if errors.As(runErr, &oe) {
			fprintf(stderr, "headroom run: not written: %v\n", oe)
		}
		if *outDir != "" && (oe == nil || oe.Path != *outDir) {
			fprintf(stderr, "headroom run: report: %s\n", filepath.Join(*outDir, "report.html"))
		}
		printJSON(stdout, res)
		fprintf(stderr, "headroom run: %s: %s\n", res.Status, res.Reason)
		return code
	}
}

// loadRunTask loads the task run names: its one TASK file, or the task
// of a --tasks list at the index given.
func loadRunTask(pos []string, tasksFile, index string) (*agent.Task, error) {
	if tasksFile != "" {
		return pickTask(tasksFile, index)
	}
	if index != "" {
		return nil, fmt.Errorf("--index picks a task of --tasks FILE, and %s is one task: drop --index", pos[0])
	}
	return agent.LoadTask(pos[0])
}

// paramValues reads the --param flags: NAME=VALUE each, a name given
// once. Whether the task declares the name, and the value is fit, Bind
// says.
func paramValues(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	values := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("--param %s: want NAME=VALUE, such as --param invoice=INV-1042", yamlconf.Quote(f))
		case name == "":
			return nil, fmt.Errorf("--param %s: no name before the '=': want NAME=VALUE, such as --param invoice=INV-1042", yamlconf.Quote(f))
		}
		if _, dup := values[name]; dup {
			return nil, fmt.Errorf("--param %s is given twice: give each parameter once", yamlconf.Quote(name))
		}
		values[name] = value
	}
	return values, nil
}

// checkRecording refuses recording flags that cannot be kept: a HAR of a
// replayed run, a cassette recorded over the one replayed, a target that
// is not a file to replace.
func checkRecording(task *agent.Task, har, calls, storage string) error {
	if har != "" && task.Replay != "" {
		return fmt.Errorf("--record-har records a live run, and %s replays %s: drop one", task.File, task.Replay)
	}
	if calls != "" && task.Cassette != "" && safefile.Same(calls, task.Cassette) {
		return fmt.Errorf("--record-calls %s is the cassette %s replays: recording again writes a copy, so name another file", calls, task.File)
	}
	for _, t := range []struct{ flag, path string }{{"--record-har", har}, {"--record-calls", calls}, {"--save-storage-state", storage}} {
		if t.path == "" {
			continue
		}
		if err := safefile.PrepareTarget(t.path); err != nil {
			return fmt.Errorf("%s: %w", t.flag, err)
		}
	}
	return nil
}
