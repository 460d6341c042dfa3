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
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/internal/yamlconf"
	"github.com/headroom-agent/headroom/llm"
)

// runFlags are run's flags, read when the command runs.
type runFlags struct {
	configFile, outDir                 string
	recordHAR, recordCalls             string
	storageState, saveStorage, session string
	tasksFile, index, learnedSpec      string
	params, extra                      listFlag
	bf                                 browserFlags
	mf                                 metricsFlags
}

// runTask runs one agent on a task file and prints its result: the
// product's main job, one per container.
func runTask(fs *pflag.FlagSet) runner {
	f := &runFlags{}
	fs.StringVar(&f.configFile, "config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	fs.StringVar(&f.outDir, "out", "", "write result.json, report.html and a screenshot per step into this `directory`")
	fs.StringVar(&f.recordHAR, "record-har", "", "record the run's pages, live, to this HAR `file` for offline replay")
	fs.StringVar(&f.recordCalls, "record-calls", "", "record the run's model calls to this cassette `file`")
	fs.StringVar(&f.storageState, "storage-state", "", "start with the cookies and localStorage of this `file` (Playwright's storageState format), instead of the task's storage_state")
	fs.StringVar(&f.saveStorage, "save-storage-state", "", "after the run, write the browser's cookies and localStorage to this `file` (Playwright's format, mode 0600)")
	fs.StringVar(&f.session, "session", "", "the session `key` the calls keep affinity by (default the task's name and a random suffix)")
	fs.StringVar(&f.tasksFile, "tasks", "", "run one task of this task list `file` (tasks: [...]), the one at --index")
	fs.StringVar(&f.index, "index", "", "run task `N` of --tasks, counting from 0 (default $JOB_COMPLETION_INDEX, else $HEADROOM_TASK_INDEX)")
	fs.Var(&f.params, "param", "give the task's parameter `NAME=VALUE` ({{NAME}} in the task); repeat for more. With --tasks, for every entry, and an entry's own value wins")
	fs.StringVar(&f.learnedSpec, "learned", "", "where learned runs live: off, memory, dir:`PATH`, redis (the config's Redis) or redis://HOST:PORT (default the config's learned:, else off)")
	fs.Var(&f.extra, "allow-extra", "let the browser reach this `domain` too, beyond the task's allowed domains (the result records it); repeat for more")
	f.bf.addBrowser(fs)
	f.mf.add(fs)
	return f.run
}

// run loads the task, opens its caller, learned runs and metrics, runs
// it and prints its result.
func (f *runFlags) run(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
	task, ok := f.task(pos, stderr)
	if !ok {
		return exitUsage
	}
	cfg, ok := loadConfig("run", f.configFile, stderr)
	if !ok {
		return exitUsage
	}
	opts, rec := f.options(cfg, stderr)
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
	lib, err := agent.OpenLearned(ctx, f.learnedSpec, cfg)
	if err != nil {
		return failed(ctx, stderr, "run", fmt.Errorf("--learned: %w", err))
	}
	if lib != nil {
		defer lib.Close()
		opts.Learned = lib
	}
	f.mf.stderr = stderr
	stopMetrics, err := f.mf.start(learnedSource(callerSource(caller), lib, task.Name), stdout)
	defer stopMetrics() // first: the last EMF lines are written while the store is open
	if err != nil {
		fprintf(stderr, "headroom run: %v\n", err)
		return exitUsage
	}

	res, runErr := agent.RunTask(ctx, task, opts)
	stopMetrics() // the run's last figures, SIGTERM or not
	return f.report(ctx, res, runErr, rec, stdout, stderr)
}

// task checks the arguments and flags and loads the task, bound to the
// --param values; what is wrong is said on stderr, and ok is false.
func (f *runFlags) task(pos []string, stderr io.Writer) (_ *agent.Task, ok bool) {
	if (len(pos) != 1) == (f.tasksFile == "") {
		fprintf(stderr, "headroom run: want one TASK file, or --tasks FILE with an index\n")
		hint(stderr, "run")
		return nil, false
	}
	if _, err := f.bf.load(); err != nil {
		fprintf(stderr, "headroom run: %v\n", err)
		return nil, false
	}
	if err := checkDomains("--allow-extra", f.extra); err != nil {
		fprintf(stderr, "headroom run: %v\n", err)
		return nil, false
	}
	values, err := paramValues(f.params)
	var task *agent.Task
	if err == nil {
		task, err = loadRunTask(pos, f.tasksFile, f.index)
	}
	if err == nil {
		// Bound here, so that a parameter unknown or without a value
		// is said before anything opens.
		task, err = task.Bind(values)
	}
	if err == nil {
		err = checkRecording(task, f.recordHAR, f.recordCalls, f.saveStorage)
	}
	if err != nil {
		fprintf(stderr, "headroom run: %v\n", err)
		return nil, false
	}
	return task, true
}

// options are the run's options from the flags, with no caller yet; rec
// is the recorder --record-har writes from, nil without it.
func (f *runFlags) options(cfg *config.File, stderr io.Writer) (opts agent.TaskOptions, rec *replay.Recorder) {
	opts = agent.TaskOptions{
		Config: cfg, LLM: llm.Options{Record: f.recordCalls},
		Browser: f.bf.options(stderr), AllowExtra: domains(f.extra),
		OutDir: f.outDir, Session: f.session, Progress: stderr,
		StorageState: f.storageState, SaveStorageState: f.saveStorage,
	}
	// This process is the agent's: Chrome's helpers are its to reap.
	opts.Browser.ReapHelpers = true
	if f.recordHAR != "" {
		rec = replay.NewRecorder(time.Now().UTC().Truncate(time.Second), replay.DefaultRedactor(), "headroom", versionString())
		opts.Browser.Record = rec
	}
	return opts, rec
}

// report writes the HAR recorded, says where the report is and prints
// the result; it returns the run's exit code.
func (f *runFlags) report(ctx context.Context, res agent.Result, runErr error, rec *replay.Recorder, stdout, stderr io.Writer) int {
	reportFence(stderr, "run", res.Refused, res.ClosedTabs, f.bf.verbose)
	code := agent.ExitCode(ctx, res.Status, runErr)
	if rec != nil && rec.Len() > 0 {
		// Even a run that failed or was stopped recorded what it saw.
		if err := rec.Archive().WriteFile(f.recordHAR); err != nil {
			fprintf(stderr, "headroom run: --record-har: %v\n", err)
			code = max(code, exitFailed)
		}
	}
	oe := (*agent.OutputError)(nil)
	if errors.As(runErr, &oe) {
		fprintf(stderr, "headroom run: not written: %v\n", oe)
	}
	if f.outDir != "" && (oe == nil || oe.Path != f.outDir) {
		fprintf(stderr, "headroom run: report: %s\n", filepath.Join(f.outDir, "report.html"))
	}
	printJSON(stdout, res)
	fprintf(stderr, "headroom run: %s: %s\n", res.Status, res.Reason)
	return code
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
