package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
)

// run parses args into a command and runs it, returning its exit code.
// Usage errors (an unknown command or flag, a stray argument) print what
// is wrong and where to look, and exit 2.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = shown{stdout}, shown{stderr}
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var code exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	}
	fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

// exitError carries a runner's exit code through cobra.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// rootLong is headroom's help: what it is, and the exit codes, from the
// one table every command's code comes from (agent.ExitCauses).
func rootLong() string {
	var b strings.Builder
	b.WriteString("headroom runs browser-automation agents that share one Azure OpenAI budget.\n\n")
	b.WriteString("Exit codes, the same for every command (the first cause that holds decides):\n")
	for _, c := range agent.ExitCauses() {
		fmt.Fprintf(&b, "  %3d  %s\n", c.Code, c.Cause)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:     "headroom",
		Short:   "browser-automation agents that share one Azure OpenAI budget",
		Long:    rootLong(),
		Version: versionString(),
		// headroom alone prints its help and succeeds, as gh and kubectl do.
		Args: groupArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
		// run prints errors once, with the command's name.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("headroom {{.Version}}\n")
	// Declared here, without cobra's -v: -v is --verbose where a command has it.
	root.Flags().Bool("version", false, "print the version")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	for _, c := range commands() {
		root.AddCommand(build(c, stdout, stderr))
	}
	root.SetHelpCommand(helpCommand(root))
	return root
}

// build makes the cobra command of c and its subcommands.
func build(c command, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:               c.use,
		Example:           c.example,
		Short:             c.summary,
		Args:              c.args,
		Hidden:            c.hidden,
		ValidArgsFunction: c.complete,
	}
	if c.args == nil {
		cmd.Args = noArgs
	}
	if len(c.subs) > 0 {
		cmd.Args = groupArgs
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		for _, s := range c.subs {
			cmd.AddCommand(build(s, stdout, stderr))
		}
		return cmd
	}
	if c.complete == nil {
		if strings.Contains(c.use, " ") {
			cmd.ValidArgsFunction = cobra.CompletionFunc(func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveDefault // file names
			})
		} else {
			cmd.ValidArgsFunction = cobra.NoFileCompletions
		}
	}
	fs := cmd.Flags()
	fs.SortFlags = false // in the order declared: the important ones first
	body := c.flags(fs)
	boundDurations(fs)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if code := body(cmd.Context(), args, stdout, stderr); code != exitOK {
			return exitError(code)
		}
		return nil
	}
	return cmd
}

// groupArgs refuses a word after a group that names none of its commands,
// suggesting the nearest.
func groupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	cmd.SuggestionsMinimumDistance = 2
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

// noArgs refuses any positional argument.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes flags only", args[0], cmd.CommandPath())
	}
	return nil
}

// exactArgs wants one positional argument, named name in messages.
func exactArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("want %s", name)
		case len(args) > 1:
			return fmt.Errorf("unexpected argument %q: want one %s", args[1], name)
		}
		return nil
	}
}

// maxArgs takes up to n positional arguments.
func maxArgs(n int, name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fmt.Errorf("unexpected argument %q: want at most %d %s", args[n], n, name)
		}
		return nil
	}
}

// flagError adds what the user likely meant to pflag's message: the long
// form of a flag written with one dash (-out), or a flag whose name is
// near the one given.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var name string
	switch {
	case strings.HasPrefix(msg, "unknown shorthand flag:"):
		// unknown shorthand flag: 'o' in -out
		if i := strings.LastIndex(msg, " in -"); i >= 0 {
			name = msg[i+len(" in -"):]
		}
	case strings.HasPrefix(msg, "unknown flag: --"):
		name = strings.TrimPrefix(msg, "unknown flag: --")
	default:
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	if f := cmd.Flags().Lookup(name); f != nil && !strings.HasPrefix(msg, "unknown flag") {
		return fmt.Errorf("%s: long flags take two dashes: --%s", msg, name)
	}
	if s := nearFlags(cmd.Flags(), name); len(s) > 0 {
		return fmt.Errorf("%s; did you mean --%s?", msg, strings.Join(s, " or --"))
	}
	return err
}

// nearFlags names the visible flags of fs within two edits of name, or
// that start with it.
func nearFlags(fs *pflag.FlagSet, name string) []string {
	var near []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		if strings.HasPrefix(f.Name, name) || distance(f.Name, name) <= 2 {
			near = append(near, f.Name)
		}
	})
	return near
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// renamed keeps a flag's old name working, hidden from help, with a note
// on standard error to use the new one.
func renamed(fs *pflag.FlagSet, old, now string) {
	f := fs.Lookup(now)
	fs.Var(f.Value, old, f.Usage)
	fs.Lookup(old).NoOptDefVal = f.NoOptDefVal
	_ = fs.MarkDeprecated(old, "use --"+now)
}

// hint points at a command's help after a usage error of its own.
func hint(stderr io.Writer, command string) {
	fprintf(stderr, "Run 'headroom %s --help' for usage.\n", command)
}
