package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

var envColumns = []string{"id", "components", "hierarchy_levels"}

func newEnvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Manage ConfigDB environments (components and ordered hierarchy levels)",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newEnvCreateCmd(), newEnvListCmd(), newEnvShowCmd(), newEnvUpdateCmd(), newEnvDeleteCmd(), newEnvExportCmd(), newEnvImportCmd())
	return cmd
}

// refList turns "1,fuel,3" into entity references (integer ids go out as numbers, names as strings).
func refList(s string) []client.ID {
	out := []client.ID{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part != "" {
			out = append(out, client.ID(part))
		}
	}
	return out
}

// nameList turns "role,nodes" into a list of names.
func nameList(s string) []string {
	out := []string{}
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func newEnvCreateCmd() *cobra.Command {
	var (
		id                 int64
		components, levels string
		format             string
	)
	cmd := &cobra.Command{
		Use:   "create [--id N] --components ID|NAME,... [--levels LEVEL,...]",
		Short: "Create an environment; levels are listed from the least to the most specific",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			comps, err := refsOf(cmd.Context(), c, client.KindComponent, refList(components))
			if err != nil {
				return err
			}
			env, err := c.CreateEnvironment(cmd.Context(), client.NewEnvironment{ID: id, Components: comps, HierarchyLevels: nameList(levels)})
			if err != nil {
				return err
			}
			return renderObject(cmd.OutOrStdout(), format, toObject(env), envColumns)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&id, "id", 0, "environment id to use (the deployment's cluster id); chosen by the server when omitted")
	f.StringVarP(&components, "components", "c", "", "components by id or name, comma-separated")
	f.StringVarP(&levels, "levels", "l", "", "hierarchy level names, least specific first, e.g. role,nodes")
	addListFormat(cmd, &format)
	return cmd
}

func newEnvListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List environments",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listObjects(cmd, format, envColumns, func(c *client.Client) (any, error) { return c.Environments(cmd.Context()) })
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newEnvShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID|UUID",
		Short: "Show an environment",
		Args:  exactArgs("ID|UUID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showObject(cmd, format, envColumns, func(c *client.Client) (any, error) {
				env, err := c.Ref(cmd.Context(), client.KindEnvironment, args[0])
				if err != nil {
					return nil, err
				}
				return c.Environment(cmd.Context(), env)
			})
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newEnvUpdateCmd() *cobra.Command {
	var (
		components, levels, release, masterIP string
		plugins                               []string
	)
	cmd := &cobra.Command{
		Use:   "update ID|UUID [--components ID|NAME,...] [--levels LEVEL,...] [--release R] [--plugin P]... [--master-ip IP]",
		Short: "Change an environment's components or hierarchy levels, or its release and plugins",
		Long: `Change an environment's components or hierarchy levels (the ConfigDB), or
the release and the enabled plugins its deployment graphs come from (the
environment as a cluster). A release or plugin is named by id, UUID,
name-version or name; --plugin replaces the enabled plugins with the ones
given (--plugin "" enables none). --master-ip is the Fuel master's address,
which tasks name as {MASTER_IP} (without it, each node's data's master_ip).`,
		Args: exactArgs("ID|UUID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in client.EnvironmentUpdate
			if cmd.Flags().Changed("components") {
				refs := refList(components)
				in.Components = &refs
			}
			if cmd.Flags().Changed("levels") {
				names := nameList(levels)
				in.HierarchyLevels = &names
			}
			changesCluster := cmd.Flags().Changed("release") || cmd.Flags().Changed("plugin") || cmd.Flags().Changed("master-ip")
			if in == (client.EnvironmentUpdate{}) && !changesCluster {
				return usagef("nothing to update: give --components, --levels, --release, --plugin or --master-ip")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			env, err := c.Ref(cmd.Context(), client.KindEnvironment, args[0])
			if err != nil {
				return err
			}
			if changesCluster {
				if err := updateCluster(cmd, c, env, release, plugins, masterIP); err != nil {
					return err
				}
			}
			if in == (client.EnvironmentUpdate{}) {
				return nil
			}
			if in.Components != nil {
				comps, err := refsOf(cmd.Context(), c, client.KindComponent, *in.Components)
				if err != nil {
					return err
				}
				in.Components = &comps
			}
			return c.UpdateEnvironment(cmd.Context(), env, in)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&components, "components", "c", "", "the environment's components by id or name, comma-separated")
	f.StringVarP(&levels, "levels", "l", "", "hierarchy level names, least specific first")
	f.StringVarP(&release, "release", "r", "", "the environment's release: id, UUID, name-version or name")
	f.StringArrayVarP(&plugins, "plugin", "p", nil, "an enabled plugin: id, UUID, name-version or name (repeatable; replaces the enabled ones)")
	f.StringVar(&masterIP, "master-ip", "", "the Fuel master's address, {MASTER_IP} in tasks (\"\" for each node's data's master_ip)")
	return cmd
}

// clusterColumns are what `env update --release/--plugin` prints.
var clusterColumns = []string{"id", "release_id", "plugins", "master_ip"}

// updateCluster sets the release or the plugins of environment env (named
// as c's microversion takes it) and prints the result. The API replaces
// both, so the one not given is sent as it is.
func updateCluster(cmd *cobra.Command, c *client.Client, env, release string, plugins []string, masterIP string) error {
	current, err := c.Cluster(cmd.Context(), env)
	if err != nil {
		return err
	}
	in := client.ClusterUpdate{ReleaseID: current.ReleaseID, Plugins: &current.Plugins, MasterIP: current.MasterIP}
	if cmd.Flags().Changed("master-ip") {
		in.MasterIP = masterIP
	}
	if cmd.Flags().Changed("release") {
		ref, err := c.Ref(cmd.Context(), client.KindRelease, release)
		if err != nil {
			return err
		}
		id := client.ID(ref)
		in.ReleaseID = &id
	}
	if cmd.Flags().Changed("plugin") {
		refs, err := refsOf(cmd.Context(), c, client.KindPlugin, refList(strings.Join(plugins, ",")))
		if err != nil {
			return err
		}
		in.Plugins = &refs
	}
	cluster, err := c.UpdateCluster(cmd.Context(), env, in)
	if err != nil {
		return err
	}
	return renderObject(cmd.OutOrStdout(), formatTable, toObject(cluster), clusterColumns)
}

func newEnvDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID|UUID",
		Short: "Delete an environment and its documents",
		Args:  exactArgs("ID|UUID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, "environments/"+url.PathEscape(args[0]), func(c *client.Client) error {
				env, err := c.Ref(cmd.Context(), client.KindEnvironment, args[0])
				if err != nil {
					return err
				}
				return c.DeleteEnvironment(cmd.Context(), env)
			})
		},
	}
}

// listObjects lists with list (a slice of wire types) and prints the list.
func listObjects(cmd *cobra.Command, format string, columns []string, list func(*client.Client) (any, error)) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	items, err := list(c)
	if err != nil {
		return err
	}
	objects, _ := toObject(items).([]any)
	return renderObjects(cmd.OutOrStdout(), format, objects, columns)
}

// showObject reads one object with show and prints it.
func showObject(cmd *cobra.Command, format string, fields []string, show func(*client.Client) (any, error)) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	v, err := show(c)
	if err != nil {
		return err
	}
	return renderObject(cmd.OutOrStdout(), format, toObject(v), fields)
}

// deleteObject deletes with del and confirms; what is the object's API path below the ConfigDB prefix.
func deleteObject(cmd *cobra.Command, what string, del func(*client.Client) error) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	if err := del(c); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", what)
	return err
}
