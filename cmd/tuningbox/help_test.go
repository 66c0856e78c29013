package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// --help names every setting of the client, secrets included, and the microversion range.
func TestHelpNamesTheEnvironment(t *testing.T) {
	out := mustCLI(t, "http://127.0.0.1:1", "", "--help")
	for _, want := range []string{"TUNINGBOX_URL", "TUNINGBOX_USER", "TUNINGBOX_PASSWORD", "TUNINGBOX_TOKEN", "TUNINGBOX_API_VERSION",
		"1.0 to " + httpapi.MaxVersion.String() + ", or latest (the newest)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	// The microversion history says what latest is.
	history, err := os.ReadFile("../../docs/microversions.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "`latest` for the newest (" + httpapi.MaxVersion.String() + ")"; !strings.Contains(string(history), want) {
		t.Errorf("docs/microversions.md lacks %q", want)
	}
}

// A user without a password is a usage error naming the variable, before any request.
func TestUnsetPasswordNamesTheVariable(t *testing.T) {
	t.Setenv("TUNINGBOX_TOKEN", "")
	t.Setenv("TUNINGBOX_PASSWORD", "")
	t.Setenv("TUNINGBOX_USER", "admin")
	_, err := cli(t, "http://127.0.0.1:1", "", "env", "list")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "TUNINGBOX_PASSWORD is not set") {
		t.Errorf("unset password: %v", err)
	}
}

// A word that names no subcommand is a usage error naming it, at every level of
// the tree, so a script does not take the group's help for success; a group
// alone still prints its help.
func TestUnknownSubcommandIsAnError(t *testing.T) {
	var groups [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		if cmd.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, sub := range cmd.Commands() {
			walk(sub, append(slices.Clip(path), sub.Name()))
		}
	}
	walk(newRootCmd(), nil)
	if len(groups) < 10 {
		t.Fatalf("only %d command groups found: %v", len(groups), groups)
	}
	for _, group := range groups {
		out, err := cli(t, "http://127.0.0.1:1", "", append(slices.Clip(group), "no-such-command", "1")...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), `unknown command "no-such-command"`) {
			t.Errorf("tuningbox %v no-such-command 1: exit %d, %v\n%s", group, exitCode(err), err, out)
		}
	}
	// A mistyped subcommand names itself and what was meant (env export exists now).
	out, err := cli(t, "http://127.0.0.1:1", "", "env", "exprot", "1")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `unknown command "exprot" for "tuningbox env"`) || !strings.Contains(err.Error(), "export") {
		t.Errorf("env exprot 1: %v\n%s", err, out)
	}
	if out, err := cli(t, "http://127.0.0.1:1", "", "env"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("env alone: %v\n%s", err, out)
	}
	if out, err := cli(t, "http://127.0.0.1:1", "", "help", "config", "get"); err != nil || !strings.Contains(out, "tuningbox config get") {
		t.Errorf("help config get: %v\n%s", err, out)
	}
	if _, err := cli(t, "http://127.0.0.1:1", "", "help", "config", "gett"); exitCode(err) != 2 || !strings.Contains(err.Error(), `unknown help topic "config gett"`) {
		t.Errorf("help config gett: %v", err)
	}
	if _, err := cli(t, "http://127.0.0.1:1", "", "evn", "list"); !strings.Contains(fmt.Sprint(err), `did you mean "env"?`) {
		t.Errorf("evn list: %v", err)
	}
}
