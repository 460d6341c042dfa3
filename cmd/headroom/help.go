package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// helpCommand is headroom help [COMMAND...]: cobra's own, except that a
// name it does not know is an error (exit 2) with a suggestion, not a
// page of help and success.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]...",
		Short: "show help for headroom or one command (help bench store)",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			cmd, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name()+"\t"+s.Short)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				if cmd.HasSubCommands() {
					return groupArgs(cmd, rest)
				}
				return fmt.Errorf("%q is not a command of %q", rest[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// fprintf writes to a terminal or pipe; a failed write there has nowhere
// better to be reported.
func fprintf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
