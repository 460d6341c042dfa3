package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"io"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/internal/plural"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// runTask runs one agent on a task file and prints its result: the
// product's main job, one per container.
func runTask(fs *pflag.FlagSet) runner {
	configFile := fs.String("config", "", "config `file` of real deployments (default $HEADROOM_CONFIG; none: the embedded simulator)")
	outDir := fs.String("out", "", "write result.json, report.html and a screenshot per step into this `directory`")
	recordHAR := fs.String("record-har", "", "record the run's pages, live, to this HAR `file` for offline replay")
	recordCalls := fs.String("record-calls", "", "record the run's model calls to this cassette `file`")
	session := fs.String("session", "", "the session `key` the calls keep affinity by (default the task's name and a random suffix)")
	tasksFile := fs.String("tasks", "", "run one task of this task list `file` (tasks: [...]), the one at --index")
	index := fs.String("index", "", "run task `N` of --tasks, counting from 0 (default $JOB_COMPLETION_INDEX, else $HEADROOM_TASK_INDEX)")
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
		var task *agent.Task
		var err error
		if *tasksFile != "" {
			task, err = pickTask(*tasksFile, *index)
		} else {
			if *index != "" {
				fprintf(stderr, "headroom run: --index picks a task of --tasks FILE, and %s is one task: drop --index\n", pos[0])
				return exitUsage
			}
			task, err = agent.LoadTask(pos[0])
		}
		if err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		if *recordHAR != "" && task.Replay != "" {
			fprintf(stderr, "headroom run: --record-har records a live run, and %s replays %s: drop one\n", task.File, task.Replay)
			return exitUsage
		}
		if *recordCalls != "" && task.Cassette != "" && safefile.Same(*recordCalls, task.Cassette) {
			fprintf(stderr, "headroom run: --record-calls %s is the cassette %s replays: recording again writes a copy, so name another file\n", *recordCalls, task.File)
			return exitUsage
		}
		for _, t := range []struct{ flag, path string }{{"--record-har", *recordHAR}, {"--record-calls", *recordCalls}} {
			if t.path == "" {
				continue
			}
			if err := safefile.PrepareTarget(t.path); err != nil {
				fprintf(stderr, "headroom run: %s: %v\n", t.flag, err)
				return exitUsage
			}
		}
		if *outDir != "" {
			if err := os.MkdirAll(*outDir, 0o755); err != nil {
				fprintf(stderr, "headroom run: --out: %v\n", err)
				return exitUsage
			}
		}

		bo, matcher, err := taskBrowser(bf.options(stderr), task, domains(extra))
		if err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		var rec *replay.Recorder
		if *recordHAR != "" {
			rec = replay.NewRecorder(time.Now().UTC().Truncate(time.Second), replay.DefaultRedactor(), "headroom", versionString())
			bo.Record = rec
		}

		caller, code := openCaller(ctx, *configFile, llm.Options{Record: *recordCalls, Replay: task.Cassette}, stderr)
		if caller == nil {
			return code
		}
		defer caller.Close()
		stopMetrics, err := mf.start(callerSource(caller), stdout)
		defer stopMetrics() // first: the last EMF lines are written while the store is open
		if err != nil {
			fprintf(stderr, "headroom run: %v\n", err)
			return exitUsage
		}
		if task.AnswerType != "" {
			if _, ok := caller.Types.Lookup(task.AnswerType); !ok {
				fprintf(stderr, "headroom run: %s: answer_type: no call type %q: define it under calltypes: in the config (system, schema, max_tokens)\n", task.File, task.AnswerType)
				return exitUsage
			}
		}

		var res agent.Result
		var runErr error
		if page, err := browser.Open(ctx, bo); err != nil {
			// No browser, no run; but a result all the same, which says why.
			runErr = redact.Error(err)
			res = agent.Result{Task: task.Name, Status: agent.Errored, Reason: runErr.Error(), Steps: []agent.Step{}, Calls: []llm.Report{}}
			if ctx.Err() != nil {
				res.Reason = "interrupted while the browser started"
			}
		} else {
			watch := watchResources(page.PID())
			res, runErr = agent.Run(ctx, task, agent.Options{
				Page: page, Caller: caller, Session: *session, Progress: stderr, OutDir: *outDir,
			})
			page.Close()
			res.Totals.PeakRSSMB, res.Totals.ChromePeakRSSMB = watch.stop()
		}
		stopMetrics() // the run's last figures, SIGTERM or not
		reportFence(stderr, "run", res.Refused, res.ClosedTabs, bf.verbose)

		code = agent.ExitCode(ctx, res.Status, runErr)
		if rec != nil && rec.Len() > 0 {
			// Even a run that failed or was stopped recorded what it saw.
			if err := rec.Archive().WriteFile(*recordHAR); err != nil {
				fprintf(stderr, "headroom run: --record-har: %v\n", err)
				code = max(code, exitFailed)
			}
		}
		if matcher != nil {
			if s := matcher.Stats(); s.Misses > 0 {
				fprintf(stderr, "headroom run: the replay missed %s (%v): the page asked for what was not recorded\n", plural.Of(s.Misses, "request"), s.Missed)
			}
		}
		if *outDir != "" {
			if err := writeOut(*outDir, &res); err != nil {
				fprintf(stderr, "headroom run: --out: %v\n", err)
				code = max(code, exitFailed)
			} else {
				fprintf(stderr, "headroom run: report: %s\n", filepath.Join(*outDir, "report.html"))
			}
		}
		printJSON(stdout, res)
		fprintf(stderr, "headroom run: %s: %s\n", res.Status, res.Reason)
		return code
	}
}

// taskBrowser is the browser a task runs in: confined to its allowed
// domains (its start URL's host when it names none), narrowed by --allow
// and widened on purpose by --allow-extra; answered from its replay when
// it has one; and with Chrome's helpers reaped by this process, whose
// agent it is.
func taskBrowser(bo browser.Options, task *agent.Task, extra []string) (browser.Options, *replay.Matcher, error) {
	bo.ReapHelpers = true
	allowed, err := task.AllowedWith(bo.AllowedDomains, extra)
	if err != nil {
		return bo, nil, err
	}
	bo.AllowedDomains = allowed
	if task.Replay == "" {
		return bo, nil, nil
	}
	a, err := replay.Load(task.Replay)
	if err != nil {
		return bo, nil, fmt.Errorf("%s: replay: %w", task.File, err)
	}
	m := replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	bo.Replay = m
	return bo, m, nil
}

// writeOut writes result.json and report.html beside the screenshots.
func writeOut(dir string, res *agent.Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteBytes(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return safefile.WriteFile(filepath.Join(dir, "report.html"), 0o644, func(w io.Writer) error {
		return agent.WriteReport(w, res, dir)
	})
}
