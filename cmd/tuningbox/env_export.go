package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/core"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/envexport"
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
	var backend, dataDir, table, bucket string
	var pathStyle bool
	cmd := &cobra.Command{
		Use:   "import FILE [--backend embedded --data DIR | --backend aws --table T --bucket B]",
		Short: "Create an environment from an export, all or nothing",
		Long: `Create the environment exported to FILE ('tuningbox env export', plain or
gzip-compressed), with every document's whole history. It keeps its id and
UUID where this tuningbox never had them, else it gets new ones (the answer
names them); so do its nodes, releases, plugins and graphs. Components,
resource definitions and deploy templates are matched by name, releases and
plugins by name and version: each is reused when it is the same here, created
where missing, and refused (409) where it differs. A cut-short, foreign or
newer-format file is refused and nothing is imported.

The import is one API request. On AWS a request ends after API Gateway's
29 s, which an environment of some 10,000 versions may not fit
(docs/operations.md): with --backend the import is written straight into the
store instead, by this process, with no request's bounds: --backend aws with
the stack's table and bucket (and AWS credentials that may write them), or
--backend embedded with the data directory of a stopped local server.`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if backend != "" {
				// The server's configuration (TUNINGBOX_TABLE, ...), as the flags change it.
				cfg, err := app.LoadConfig(os.Getenv)
				if err != nil {
					return err
				}
				cfg.Backend = backend
				for dst, flag := range map[*string]string{&cfg.DataDir: dataDir, &cfg.Table: table, &cfg.Bucket: bucket} {
					if flag != "" {
						*dst = flag
					}
				}
				cfg.S3PathStyle = cfg.S3PathStyle || pathStyle
				return importIntoStore(cmd, args[0], cfg)
			}
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
			printImported(cmd, rep.ID, rep.UUID, rep.Documents, rep.Versions)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&backend, "backend", "", "write straight into this store (embedded or aws) instead of calling the API")
	f.StringVar(&dataDir, "data", "", "data directory of the embedded backend, its server stopped (env TUNINGBOX_DATA; default ./data)")
	f.StringVar(&table, "table", "", "DynamoDB table of the aws backend (env TUNINGBOX_TABLE)")
	f.StringVar(&bucket, "bucket", "", "S3 bucket of the aws backend (env TUNINGBOX_BUCKET)")
	f.BoolVar(&pathStyle, "s3-path-style", false, "path-style S3 addressing (emulators)")
	return cmd
}

// importIntoStore imports the export in file straight into the store cfg
// names, with the services the server would use over it.
func importIntoStore(cmd *cobra.Command, file string, cfg app.Config) error {
	if cfg.Backend == core.BackendAWS && (cfg.Table == "" || cfg.Bucket == "") {
		return usagef("--backend aws needs --table and --bucket (or TUNINGBOX_TABLE and TUNINGBOX_BUCKET)")
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx := cmd.Context()
	backend, err := app.OpenBackend(ctx, cfg, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
	if err != nil {
		return err
	}
	if backend.Close != nil {
		defer backend.Close()
	}
	svc, err := server.EnvironmentServices(backend, cfg)
	if err != nil {
		return err
	}
	env, counts, err := envexport.Import(ctx, f, svc)
	if err != nil {
		return err
	}
	printImported(cmd, env.ID, env.UUID, counts.Documents, counts.Versions)
	return nil
}

func printImported(cmd *cobra.Command, id int64, uuid string, documents, versions int) {
	fmt.Fprintf(cmd.OutOrStdout(), "environment %d (%s) imported: %d documents, %d versions\n", id, uuid, documents, versions)
}
