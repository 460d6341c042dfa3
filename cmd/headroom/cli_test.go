package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// leaves are every command that runs something, hidden ones included.
func leaves(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.HasSubCommands() {
			out = append(out, leaves(s)...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// path is a command's words after headroom.
func path(c *cobra.Command) []string {
	return strings.Fields(c.CommandPath())[1:]
}

// TestEveryCommandsHabits holds each command to the same habits: --help
// prints its usage with --long flags on stdout and exits 0; an unknown
// flag and a stray argument are refused with the command's name and exit
// 2, before any work.
func TestEveryCommandsHabits(t *testing.T) {
	root := newRoot(new(bytes.Buffer), new(bytes.Buffer))
	root.InitDefaultCompletionCmd()
	cmds := leaves(root)
	if len(cmds) < 20 {
		t.Fatalf("found %d commands", len(cmds))
	}
	for _, c := range cmds {
		p := path(c)
		name := strings.Join(p, " ")
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			code, out, errs := runArgs(t, append(p, "--help")...)
			if code != exitOK || !strings.Contains(out, "headroom "+name) || !strings.Contains(out, "  -h, --help") {
				t.Errorf("--help: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			c.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(out, "--"+f.Name) {
					t.Errorf("--help does not show --%s", f.Name)
				}
			})
			code, _, errs = runArgs(t, append(p, "--no-such-flag")...)
			if code != exitUsage || !strings.Contains(errs, "headroom "+name+": unknown flag: --no-such-flag") || !strings.Contains(errs, "--help") {
				t.Errorf("a bad flag: exit %d, stderr %q", code, errs)
			}
			if name == "help" || strings.HasPrefix(name, "completion ") {
				return // their arguments are command names, or none at all
			}
			stray := append(p, "one", "two", "three")
			code, _, errs = runArgs(t, stray...)
			if code != exitUsage || !strings.Contains(errs, "headroom "+name+": unexpected argument") {
				t.Errorf("stray arguments: exit %d, stderr %q", code, errs)
			}
		})
	}
}

// TestExitCodesPerCommand runs each command into its commonest mistake
// and checks the code and that the message names what is wrong.
func TestExitCodesPerCommand(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", missing}, exitUsage, missing},
		{[]string{"run"}, exitUsage, "want one TASK file"},
		{[]string{"record", "http://127.0.0.1:1/"}, exitUsage, "want --out FILE"},
		{[]string{"record"}, exitUsage, "want URL"},
		{[]string{"observe"}, exitUsage, "want a URL, or --har FILE"},
		{[]string{"observe", "--har", missing}, exitUsage, missing},
		{[]string{"testsite", "--dir", dir}, exitUsage, "holds no site"},
		{[]string{"sim"}, exitUsage, "no deployments"},
		{[]string{"calltypes", "--config", missing}, exitUsage, missing},
		{[]string{"call"}, exitUsage, "want TYPE"},
		{[]string{"call", "no-such-type", "--input", "../../calltypes/examples/yes-no.json"}, exitUsage, `unknown call type "no-such-type"`},
		{[]string{"budget", "plan", "--config", missing}, exitUsage, missing},
		{[]string{"budget", "doctor", "--config", missing}, exitUsage, missing},
		{[]string{"budget", "top", "--config", missing}, exitUsage, missing},
		{[]string{"budget", "calibrate", "--config", missing}, exitUsage, missing},
		{[]string{"bench", "store", "--clients", "0"}, exitUsage, "--clients"},
		{[]string{"bench", "burst", "--requests", "0"}, exitUsage, "--requests"},
		{[]string{"bench", "fleet", "--agents", "0"}, exitUsage, "--agents"},
		{[]string{"bench", "coldstart", "--processes", "0"}, exitUsage, "--processes"},
		{[]string{"bench", "caps", "--flat-cap", "0"}, exitUsage, "--flat-cap"},
		{[]string{"bench", "agents", "--agents", "0"}, exitUsage, "--agents"},
		{[]string{"demo", "--task", missing}, exitUsage, "--task"},
		{[]string{"version"}, exitOK, "headroom v"},
		{[]string{"completion", "bash"}, exitOK, "bash completion"},
		{[]string{"completion", "zsh"}, exitOK, "zsh completion"},
		{[]string{"completion", "fish"}, exitOK, "fish"},
	} {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("headroom %s: exit %d, want %d with %q\nstdout: %.300s\nstderr: %s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
}

// TestCompletionOffersCallTypes: call TYPE completes to the types' names.
func TestCompletionOffersCallTypes(t *testing.T) {
	code, out, errs := runArgs(t, cobra.ShellCompRequestCmd, "call", "")
	if code != exitOK || !strings.Contains(out, "click-pick") || !strings.Contains(out, "yes-no") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, out, _ = runArgs(t, cobra.ShellCompRequestCmd, "bench", "st")
	if code != exitOK || !strings.Contains(out, "store") {
		t.Errorf("bench st: exit %d, %s", code, out)
	}
}

// TestVersionIsStamped: a test binary has no link-time version, so the
// version is VERSION's, with the commit when the build recorded one.
func TestVersionIsStamped(t *testing.T) {
	want, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if v := versionString(); !strings.HasPrefix(v, strings.TrimSpace(string(want))) || strings.Contains(v, "(devel)") {
		t.Errorf("version %q, want it to start with %q", v, want)
	}
}

// TestManifestsUseRealFlags parses the command lines the image and the
// deploy manifests give headroom, so renaming a flag cannot break a fleet's containers
// unnoticed.
func TestManifestsUseRealFlags(t *testing.T) {
	var lines [][]string
	job, err := os.ReadFile("../../deploy/kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+args: (\["run".*\])$`).FindAllSubmatch(job, -1) {
		var args []string
		if err := json.Unmarshal(m[1], &args); err != nil {
			t.Fatalf("job.yaml args %s: %v", m[1], err)
		}
		lines = append(lines, args)
	}
	td, err := os.ReadFile("../../deploy/ecs/task-definition.json")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		ContainerDefinitions []struct {
			Command []string `json:"command"`
		} `json:"containerDefinitions"`
	}
	if err := json.Unmarshal(td, &def); err != nil {
		t.Fatal(err)
	}
	for _, c := range def.ContainerDefinitions {
		if len(c.Command) > 0 {
			lines = append(lines, c.Command)
		}
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^CMD (\[.*\])$`).FindSubmatch(dockerfile); m != nil {
		var args []string
		if err := json.Unmarshal(m[1], &args); err != nil {
			t.Fatalf("Dockerfile CMD %s: %v", m[1], err)
		}
		lines = append(lines, args)
	}
	if len(lines) < 3 {
		t.Fatalf("found %d command lines in the manifests", len(lines))
	}
	for _, args := range lines {
		root := newRoot(new(bytes.Buffer), new(bytes.Buffer))
		cmd, rest, err := root.Find(args)
		if err == nil {
			err = cmd.ParseFlags(rest)
		}
		if err == nil {
			err = cmd.ValidateArgs(cmd.Flags().Args())
		}
		if err != nil || cmd == root {
			t.Errorf("headroom %s: %v", strings.Join(args, " "), err)
		}
	}
}
