package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/agent/learned"
)

func learnedCommands() []command {
	return []command{
		{use: "ls", summary: "list the learned runs: key, task, steps, what a replay saves", args: noArgs, flags: learnedList,
			example: "  headroom learned ls --learned dir:learned"},
		{use: "show KEY", summary: "show a learned run as the steps a person would take", args: exactArgs("KEY"), flags: learnedShow},
		{use: "rm KEY", summary: "drop a learned run: the next run of its task asks the model again", args: exactArgs("KEY"), flags: learnedRemove},
	}
}

// learnedFlags are the flags every learned command takes: where the
// store is.
type learnedFlags struct {
	spec, config *string
	json         *bool
}

func (f *learnedFlags) add(fs *pflag.FlagSet) {
	f.spec = fs.String("learned", "", "the store: memory, dir:`PATH`, redis (the config's Redis) or redis://HOST:PORT (default the config's learned:)")
	f.config = fs.String("config", "", "config `file` whose learned: names the store (default $HEADROOM_CONFIG)")
	f.json = fs.Bool("json", false, "print JSON")
}

// open opens the library the flags name; a missing one is a usage error.
func (f *learnedFlags) open(ctx context.Context, command string, stderr io.Writer) (*learned.Library, int) {
	cfg, ok := loadConfig(command, *f.config, stderr)
	if !ok {
		return nil, exitUsage
	}
	lib, err := agent.OpenLearned(ctx, *f.spec, cfg)
	if err != nil {
		return nil, failed(ctx, stderr, command, err)
	}
	if lib == nil {
		fprintf(stderr, "headroom %s: no store: give --learned dir:PATH or redis://HOST:PORT, or a config with learned:\n", command)
		return nil, exitUsage
	}
	return lib, exitOK
}

// withStore is a learned command's runner: the store the flags name,
// opened for body and closed after it.
func withStore(fs *pflag.FlagSet, command string, body func(ctx context.Context, f *learnedFlags, lib *learned.Library, pos []string, stdout, stderr io.Writer) int) runner {
	f := &learnedFlags{}
	f.add(fs)
	return func(ctx context.Context, pos []string, stdout, stderr io.Writer) int {
		lib, code := f.open(ctx, command, stderr)
		if lib == nil {
			return code
		}
		defer lib.Close()
		return body(ctx, f, lib, pos, stdout, stderr)
	}
}

func learnedList(fs *pflag.FlagSet) runner {
	return withStore(fs, "learned ls", func(ctx context.Context, f *learnedFlags, lib *learned.Library, _ []string, stdout, stderr io.Writer) int {
		list, err := lib.List(ctx)
		if err != nil {
			return failed(ctx, stderr, "learned ls", err)
		}
		if *f.json {
			return printJSON(stdout, listedJSON(list))
		}
		fprintf(stdout, "%-44s  %-24s  %5s  %8s  %-20s  %s\n", "KEY", "TASK", "STEPS", "SAVES", "LEARNED", "REVISION")
		for _, l := range list {
			if l.Err != nil {
				fprintf(stdout, "%-44s  unusable: %v\n", l.Key, l.Err)
				continue
			}
			e := l.Entry
			fprintf(stdout, "%-44s  %-24s  %5d  %8d  %-20s  %d\n", l.Key, clipTo(e.Task, 24), e.Steps(), e.Reserved(), e.LearnedAt.Format("2006-01-02 15:04:05Z"), e.Revision)
		}
		return exitOK
	})
}

// listedJSON is a listing as JSON: each entry, or why it is unusable.
func listedJSON(list []learned.Listed) []map[string]any {
	out := make([]map[string]any, 0, len(list))
	for _, l := range list {
		m := map[string]any{"key": l.Key}
		if l.Err != nil {
			m["error"] = l.Err.Error()
		} else {
			m["task"], m["steps"], m["saves"], m["revision"], m["learned_at"] = l.Entry.Task, l.Entry.Steps(), l.Entry.Reserved(), l.Entry.Revision, l.Entry.LearnedAt
		}
		out = append(out, m)
	}
	return out
}

func learnedShow(fs *pflag.FlagSet) runner {
	return withStore(fs, "learned show", func(ctx context.Context, f *learnedFlags, lib *learned.Library, pos []string, stdout, stderr io.Writer) int {
		e, err := lib.Load(ctx, pos[0])
		if err != nil {
			return failed(ctx, stderr, "learned show", fmt.Errorf("%s: %w", pos[0], err))
		}
		if *f.json {
			return printJSON(stdout, e)
		}
		fprintf(stdout, "%s", describeEntry(e))
		return exitOK
	})
}

// describeEntry is a learned run as a person reads it.
func describeEntry(e *learned.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (revision %d, learned %s)\n", e.Key, e.Revision, e.LearnedAt.Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(&b, "task:    %s\ngoal:    %s\nstart:   %s\n", e.Task, e.Template.Goal, e.Template.Start)
	if len(e.Template.Params) > 0 {
		fmt.Fprintf(&b, "params:  %s\n", strings.Join(e.Template.Params, ", "))
	}
	if len(e.Template.Secrets) > 0 {
		fmt.Fprintf(&b, "secrets: %s\n", strings.Join(e.Template.Secrets, ", "))
	}
	n := 0
	for _, g := range e.Goals {
		if len(e.Goals) > 1 {
			fmt.Fprintf(&b, "goal of step %d: %s\n", g.Step+1, g.Goal)
		}
		for _, s := range g.Steps {
			n++
			fmt.Fprintf(&b, "  %d. %s\n", n, s)
		}
	}
	if e.Answer != nil {
		fmt.Fprintf(&b, "answer:  %s\n", e.Answer)
	}
	fmt.Fprintf(&b, "a replay saves %d reserved tokens\n", e.Reserved())
	return b.String()
}

func learnedRemove(fs *pflag.FlagSet) runner {
	return withStore(fs, "learned rm", func(ctx context.Context, f *learnedFlags, lib *learned.Library, pos []string, stdout, stderr io.Writer) int {
		if err := learned.CheckKey(pos[0]); err != nil {
			fprintf(stderr, "headroom learned rm: %v\n", err)
			return exitUsage
		}
		if err := lib.Delete(ctx, pos[0]); err != nil {
			return failed(ctx, stderr, "learned rm", err)
		}
		fprintf(stderr, "headroom learned rm: %s dropped\n", pos[0])
		return exitOK
	})
}

func clipTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
