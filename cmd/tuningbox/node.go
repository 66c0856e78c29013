package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// nodeColumns are what node tables show; before microversion 1.2 "id" is the
// legacy integer id and "uuid" the UUID, from 1.2 on "id" is the UUID.
var nodeColumns = []string{"id", "uuid", "fqdn", "environment_id", "levels", "roles", "traits", "interfaces", "status", "disabled_reason", "maintenance"}

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
	cmd.AddCommand(newNodeListCmd(), newNodeShowCmd(), newNodeCreateCmd(), newNodeSetCmd(), newNodeStepsCmd(), newNodeValidateCmd(), newNodeDeleteCmd())
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
		fqdn, env, uuid, format, levels, interfaces string
		id                                          int64
		roles, traits                               []string
	)
	cmd := &cobra.Command{
		Use:   "create --fqdn FQDN --env ID|UUID [--levels role=R,...] [--role R]... [--trait T]... [--interfaces JSON]",
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
			if interfaces != "" {
				if in.Interfaces, err = interfacesOf(interfaces); err != nil {
					return err
				}
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
	f.StringVar(&interfaces, "interfaces", "", interfacesUsage)
	addListFormat(cmd, &format)
	return cmd
}

func newNodeSetCmd() *cobra.Command {
	var (
		status, reason, fqdn, env, format, levels, interfaces string
		maintenance                                           bool
		roles, traits                                         []string
	)
	cmd := &cobra.Command{
		Use:   "set UUID|ID|FQDN [--status enabled|disabled [--reason TEXT]] [--maintenance=BOOL] [--levels role=R,...] [--roles a,b] [--traits A,B] [--interfaces JSON|null] [--fqdn F] [--env E]",
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
			if flags.Changed("interfaces") {
				supported, err := interfacesOf(interfaces)
				if err != nil {
					return err
				}
				in.Interfaces = &supported
			}
			if in == (client.NodeUpdate{}) {
				return usagef("nothing to change: give at least one of --status, --reason, --maintenance, --levels, --roles, --traits, --interfaces, --fqdn, --env")
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
	f.StringVar(&interfaces, "interfaces", "", interfacesUsage+`; "null": everything supported again`)
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

const interfacesUsage = `deploy steps the node supports, as JSON by interface, e.g. {"deploy":["*"],"raid":["create_configuration"]} ("*": every step; default: everything)`

// interfacesOf reads --interfaces: a JSON object of step name lists, or null.
func interfacesOf(s string) (map[string][]string, error) {
	var out map[string][]string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, usagef("--interfaces %q: want a JSON object of step name lists by interface, or null: %v", s, err)
	}
	return out, nil
}

func newNodeDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete UUID|ID|FQDN",
		Short: "Remove a node from the registry (its legacy id is never given out again)",
		Args:  exactArgs("UUID|ID|FQDN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, "node "+args[0], func(c *client.Client) error {
				ref, err := nodeRef(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				return c.DeleteNode(cmd.Context(), ref)
			})
		},
	}
}

func newNodeValidateCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "validate UUID|ID|FQDN",
		Short: "Validate a node: do its deploy step interfaces support every deploy template its traits enable?",
		Long: `Validate a node as Ironic does: each deploy step interface is
valid (true), invalid (false, with the deploy template and the step the node
does not support), or not supported by the node and needed by nothing (empty
result, "not supported"). The exit status is 1 when an interface is invalid.`,
		Args: exactArgs("UUID|ID|FQDN"),
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
			results, err := c.ValidateNode(cmd.Context(), ref)
			if err != nil {
				return err
			}
			rows := make([]any, 0, len(results))
			var invalid []string
			for _, iface := range slices.Sorted(maps.Keys(results)) {
				v := results[iface]
				row := map[string]any{"interface": iface, "result": nil, "reason": nil}
				if v.Result != nil {
					row["result"] = *v.Result
					if !*v.Result {
						invalid = append(invalid, iface)
					}
				}
				if v.Reason != nil {
					row["reason"] = *v.Reason
				}
				rows = append(rows, row)
			}
			if format == formatTable {
				err = renderObjects(cmd.OutOrStdout(), format, rows, []string{"interface", "result", "reason"})
			} else {
				err = renderObject(cmd.OutOrStdout(), format, toObject(results), nil)
			}
			if err == nil && len(invalid) > 0 {
				err = fmt.Errorf("node %s is not valid: interfaces %s", args[0], strings.Join(invalid, ", "))
			}
			return err
		},
	}
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
