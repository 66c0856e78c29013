// Command tuningbox is the local server (`tuningbox serve`) and the command-line
// client of the tuningbox API.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tuningbox",
		Short: "Configuration database for deployments: server and client",
		Long: fmt.Sprintf(`Configuration database for deployments: the server (tuningbox serve) and
the command-line client of its API.

The client's settings come from flags or the environment:
  TUNINGBOX_URL           the API base URL (--url; default http://127.0.0.1:8080)
  TUNINGBOX_USER          user for HTTP Basic auth (--user)
  TUNINGBOX_PASSWORD      that user's password (only from the environment)
  TUNINGBOX_TOKEN         an API token (tbx_...; only from the environment), instead of user and password
  TUNINGBOX_API_VERSION   the microversion (--api-version): %s to %s, or latest (the newest); unset: %[1]s
  TUNINGBOX_CACERT        a CA file to trust for HTTPS (--cacert)
  TUNINGBOX_CLIENT_CERT, TUNINGBOX_CLIENT_KEY   a client certificate (--client-cert, --client-key)`, httpapi.MinVersion, httpapi.MaxVersion),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addClientFlags(root)
	root.AddCommand(
		newServeCmd(),
		newConfigCmd(),
		newEnvCmd(),
		newCompCmd(),
		newDefCmd(),
		newLvlCmd(),
		newOverrideCmd(),
		newTemplateCmd(),
		newNodeCmd(),
		newReleaseCmd(),
		newPluginCmd(),
		newGraphCmd(),
		newAgentCmd(),
		newUserCmd(),
		newTokenCmd(),
		newStoreCmd(),
	)
	root.InitDefaultCompletionCmd()
	rejectUnknownSubcommands(root)
	root.SetHelpCommand(newHelpCmd())
	return root
}

// newHelpCmd is `tuningbox help [command]`: cobra's prints the root's help, and
// exits 0, for a topic that names no command.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, rest, err := cmd.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return usagef("unknown help topic %q", strings.Join(args, " "))
			}
			return topic.Help()
		},
	}
}

// rejectUnknownSubcommands makes every command that only groups others fail,
// as a usage error, on an argument that names none of them: cobra would print
// the group's help and exit 0, and a script would believe it worked. Without
// arguments a group still prints its help.
func rejectUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2 // cobra's own default for the root's unknown commands
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", suggestions[0])
		}
		return usagef("%s", msg)
	}
}

// exitCode maps an error to the process exit status: 2 for usage errors,
// 3 when the API answered "not found", 4 for a damaged database file, the
// chosen status of an exitStatus (graph run wait), 1 otherwise.
func exitCode(err error) int {
	var chosen *exitStatus
	switch {
	case errors.As(err, &chosen):
		return chosen.code
	case errors.Is(err, bolt.ErrDamaged):
		return 4
	case errors.Is(err, client.ErrNotFound):
		return 3
	case errors.As(err, new(*usageError)):
		return 2
	default:
		return 1
	}
}

// usageError is a mistake in the command line itself.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }
