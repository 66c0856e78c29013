package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// nodeColumns are what node tables show; before microversion 1.2 "id" is the
// legacy integer id and "uuid" the UUID, from 1.2 on "id" is the UUID.
var nodeColumns = []string{"id", "uuid", "fqdn", "environment_id", "levels", "roles", "traits", "status", "disabled_reason", "maintenance"}

// deployStepsVersion is the microversion `node steps` asks for unless
// --api-version says otherwise: deploy steps exist from 1.1, which still takes integer ids.
const deployStepsVersion = "1.1"

func newNodeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Manage the node registry and plan deploy steps",
		Long: `Manage registered nodes. A node is named by its UUID, its legacy integer id
or its FQDN (looked up with a hostname search).`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newNodeListCmd(), newNodeShowCmd(), newNodeCreateCmd(), newNodeSetCmd(), newNodeStepsCmd())
	return cmd
}

// nodeRef names the node ref names (its id, UUID or FQDN) as c's microversion takes it.
func nodeRef(ctx context.Context, c *client.Client, ref string) (string, error) {
	return c.Ref(ctx, client.KindNode, ref)
}

func renderNode(cmd *cobra.Command, n *client.Node, format string) error {
	return renderObject(cmd.OutOrStdout(), format, toObject(n), nodeColumns)
}

func newNodeListCmd() *cobra.Command {
	var (
		hostname, marker, format string
		limit                    int
	)
	cmd := &cobra.Command{
		Use:   "list [--hostname PATTERN | --limit N [--marker UUID]]",
		Short: "List nodes, or search them by hostname substring",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hostname != "" && (limit > 0 || marker != "") {
				return usagef("--hostname searches every node: it does not go with --limit or --marker")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			found, err := c.Nodes(cmd.Context(), client.NodeQuery{Hostname: hostname, Limit: limit, Marker: marker})
			if err != nil {
				return err
			}
			return renderObjects(cmd.OutOrStdout(), format, toObjects(found), nodeColumns)
		},
	}
	f := cmd.Flags()
	f.StringVar(&hostname, "hostname", "", "show the nodes whose FQDN contains this text")
	f.IntVar(&limit, "limit", 0, "show one page of at most this many nodes")
	f.StringVar(&marker, "marker", "", "node after which the listing starts")
	addListFormat(cmd, &format)
	return cmd
}

func newNodeShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show UUID|ID|FQDN",
		Short: "Show a node",
		Args:  exactArgs("UUID|ID|FQDN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			ref, err := nodeRef(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			n, err := c.Node(cmd.Context(), ref)
			if err != nil {
				return err
			}
			return renderNode(cmd, n, format)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newNodeCreateCmd() *cobra.Command {
	var (
		fqdn, env, uuid, format, levels string
		id                              int64
		roles, traits                   []string
	)
	cmd := &cobra.Command{
		Use:   "create --fqdn FQDN --env ID|UUID [--levels role=R,...] [--role R]... [--trait T]...",
		Short: "Register a node",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fqdn == "" || env == "" {
				return usagef("--fqdn and --env are required")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			envRef, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
			if err != nil {
				return err
			}
			in := client.NewNode{FQDN: fqdn, EnvironmentID: client.ID(envRef), UUID: uuid, Roles: append([]string{}, roles...), Traits: append([]string{}, traits...)}
			if id > 0 {
				in.ID = client.ID(strconv.FormatInt(id, 10))
			}
			if levels != "" {
				placement, err := placementOf(levels)
				if err != nil {
					return err
				}
				in.Levels = placement
			}
			n, err := c.CreateNode(cmd.Context(), in)
			if err != nil {
				return err
			}
			return renderNode(cmd, n, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fqdn, "fqdn", "", "the node's fully qualified domain name (required)")
	f.StringVar(&env, "env", "", "id or UUID of the node's environment (required)")
	f.StringVar(&levels, "levels", "", "the node's values for the ConfigDB levels above the node level, e.g. role=compute")
	f.StringArrayVar(&roles, "role", nil, "a role of the node (repeatable)")
	f.StringArrayVar(&traits, "trait", nil, "a trait of the node, e.g. CUSTOM_RAID_MIRROR (repeatable)")
	f.StringVar(&uuid, "uuid", "", "UUID to give the node (default: generated)")
	f.Int64Var(&id, "id", 0, "legacy integer id to give the node (default: the next free one; API versions before 1.2)")
	addListFormat(cmd, &format)
	return cmd
}

func newNodeSetCmd() *cobra.Command {
	var (
		status, reason, fqdn, env, format, levels string
		maintenance                               bool
		roles, traits                             []string
	)
	cmd := &cobra.Command{
		Use:   "set UUID|ID|FQDN [--status enabled|disabled [--reason TEXT]] [--maintenance=BOOL] [--levels role=R,...] [--roles a,b] [--traits A,B] [--fqdn F] [--env E]",
		Short: "Change a node: only the given flags are sent",
		Args:  exactArgs("UUID|ID|FQDN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			flags := cmd.Flags()
			var in client.NodeUpdate
			for flag, field := range map[string]**string{"status": &in.Status, "reason": &in.DisabledReason, "fqdn": &in.FQDN} {
				if flags.Changed(flag) {
					v, _ := flags.GetString(flag)
					*field = &v
				}
			}
			if flags.Changed("env") {
				ref := client.ID(env) // named as the microversion takes it below
				in.EnvironmentID = &ref
			}
			if flags.Changed("maintenance") {
				in.Maintenance = &maintenance
			}
			if flags.Changed("roles") {
				set := append([]string{}, roles...)
				in.Roles = &set
			}
			if flags.Changed("traits") {
				set := append([]string{}, traits...)
				in.Traits = &set
			}
			if flags.Changed("levels") {
				placement, err := placementOf(levels)
				if err != nil {
					return err
				}
				in.Levels = &placement
			}
			if in == (client.NodeUpdate{}) {
				return usagef("nothing to change: give at least one of --status, --reason, --maintenance, --levels, --roles, --traits, --fqdn, --env")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			ref, err := nodeRef(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if in.EnvironmentID != nil {
				envRef, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
				if err != nil {
					return err
				}
				*in.EnvironmentID = client.ID(envRef)
			}
			n, err := c.UpdateNode(cmd.Context(), ref, in)
			if err != nil {
				return err
			}
			return renderNode(cmd, n, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "enabled or disabled")
	f.StringVar(&reason, "reason", "", "why the node is disabled (with --status disabled)")
	f.BoolVar(&maintenance, "maintenance", false, "put the node in maintenance (or --maintenance=false)")
	f.StringVar(&levels, "levels", "", "replace the node's placement, e.g. role=compute (\"\" for none)")
	f.StringSliceVar(&roles, "roles", nil, "replace the node's roles (comma-separated; \"\" for none)")
	f.StringSliceVar(&traits, "traits", nil, "replace the node's traits (comma-separated; \"\" for none)")
	f.StringVar(&fqdn, "fqdn", "", "new FQDN")
	f.StringVar(&env, "env", "", "id or UUID of the node's new environment")
	addListFormat(cmd, &format)
	return cmd
}

func newNodeStepsCmd() *cobra.Command {
	var (
		traits []string
		format string
	)
	cmd := &cobra.Command{
		Use:   "steps UUID|ID|FQDN [--trait T]...",
		Short: "Show the ordered deploy steps a deployment of the node with these instance traits runs",
		Args:  exactArgs("UUID|ID|FQDN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			c = withDefaultVersion(c, deployStepsVersion)
			ref, err := nodeRef(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			steps, err := c.DeploySteps(cmd.Context(), ref, traits)
			if err != nil {
				return err
			}
			return renderObjects(cmd.OutOrStdout(), format, toObjects(steps), []string{"priority", "interface", "step", "args"})
		},
	}
	cmd.Flags().StringArrayVar(&traits, "trait", nil, "a trait requested for the instance (repeatable)")
	addListFormat(cmd, &format)
	return cmd
}

// placementOf reads --levels "role=compute,rack=r1" as the node's placement.
func placementOf(s string) (map[string]string, error) {
	pairs, err := parseLevels(s)
	if err != nil {
		return nil, err
	}
	return levelMap(pairs), nil
}
