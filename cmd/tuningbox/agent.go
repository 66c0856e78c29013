package main

import (
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/agent"
	"github.com/tuningbox/tuningbox/shared/logjson"
)

func newAgentCmd() *cobra.Command {
	var opts agent.Options
	cmd := &cobra.Command{
		Use:   "agent --node FQDN|ID|UUID",
		Short: "Run this node's tasks of the deployment graphs executed on its cluster",
		Long: `Runs on a node: claims the node's tasks of the transactions running on its
cluster (its environment), runs them (shell, puppet apply, upload_file,
copy_files, sync; reboot only with --allow-reboot) and reports each result with
its exit code, duration and the tail of its output. Credentials as for every
command (TUNINGBOX_URL, TUNINGBOX_USER/TUNINGBOX_PASSWORD or TUNINGBOX_TOKEN);
the node's own user (role node) is enough.

Without work it waits in a long poll (--wait), so idle agents cost the server
a few requests a minute. With --once it exits when the node has nothing left
to do in the transactions it found: 0, or 1 when one of its tasks failed.
SIGINT/SIGTERM stop the task in flight (its process group gets SIGTERM, then
SIGKILL after --stop-grace), report it failed and exit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Node == "" {
				return usagef("--node is required")
			}
			if opts.Wait < 0 || opts.Wait > 25*time.Second {
				return usagef("--wait must be between 0s and 25s")
			}
			// A long poll must not outlast the client's own timeout.
			c, err := newAPIClient(client.WithTimeout(max(clientOpts.timeout, opts.Wait+15*time.Second)))
			if err != nil {
				return err
			}
			// The agent speaks the base microversion: its node's legacy integer
			// ids name it in claims and reports, whatever --api-version says.
			return agent.New(c.At(""), opts, slog.New(logjson.New(cmd.ErrOrStderr(), nil))).Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Node, "node", "", "this node: FQDN, id or UUID")
	f.BoolVar(&opts.Once, "once", false, "exit when the node has no more work in the running transactions")
	f.StringVar(&opts.Workdir, "workdir", "", "working directory of tasks and their logs (default: a directory under $TMPDIR)")
	f.DurationVar(&opts.Wait, "wait", 20*time.Second, "how long one request waits for work on the server (long poll; 0 polls)")
	f.BoolVar(&opts.AllowReboot, "allow-reboot", false, "really reboot for reboot tasks (otherwise they are reported, not performed)")
	f.StringVar(&opts.Puppet, "puppet", "puppet", "the puppet command puppet tasks run")
	f.StringVar(&opts.Root, "root", "", "take the files tasks write, sync's destination and the working directory below this directory (staging and tests)")
	f.StringVar(&opts.CopyFrom, "copy-from", "", "the Fuel master's files as this node sees them, where copy_files reads its sources (default: --root, or /)")
	f.DurationVar(&opts.StopGrace, "stop-grace", 5*time.Second, "how long a stopped task may take to exit after SIGTERM before SIGKILL")
	return cmd
}
