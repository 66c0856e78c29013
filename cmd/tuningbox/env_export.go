package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

func newEnvExportCmd() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "export ENV --to FILE",
		Short: "Write an environment with every document's whole history to FILE",
		Long: `Write environment ENV (id or UUID) to FILE: its hierarchy levels, its
components with their resource definitions, every values and overrides
document with all its versions (content, time, writer), its nodes, what its
cluster deploys with (release and plugins with their metadata and graphs, the
cluster's own graphs) and its deploy templates (default steps, the templates
its nodes' traits name), as JSON lines (docs/operations.md). FILE appears
only once the whole export has arrived.
Read it into any tuningbox, local or on AWS, with 'tuningbox env import FILE'.`,
		Args: exactArgs("ENV"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return usagef("--to FILE is required")
			}
			// An export takes as long as the environment takes to send: no request timeout.
			c, err := newAPIClient(client.WithTimeout(0))
			if err != nil {
				return err
			}
			err = writeFileChecked(cmd.Context(), to, func(ctx context.Context, w io.Writer) (int64, error) {
				return c.ExportEnvironment(ctx, args[0], w)
			}, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %s exported to %s\n", args[0], to)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "file to write the export to")
	return cmd
}

func newEnvImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Create an environment from an export, all or nothing",
		Long: `Create the environment exported to FILE ('tuningbox env export', plain or
gzip-compressed), with every document's whole history. It keeps its id and
UUID where this tuningbox never had them, else it gets new ones (the answer
names them); so do its nodes, releases, plugins and graphs. Components,
resource definitions and deploy templates are matched by name, releases and
plugins by name and version: each is reused when it is the same here, created
where missing, and refused (409) where it differs. A cut-short, foreign or
newer-format file is refused and nothing is imported.`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			export, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			rep, err := c.ImportEnvironment(cmd.Context(), export)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %d (%s) imported: %d documents, %d versions\n", rep.ID, rep.UUID, rep.Documents, rep.Versions)
			return nil
		},
	}
}
