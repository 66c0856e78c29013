package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

const nodesPath = "/api/v1/nodes"

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

// nodePath is the API path of the node ref names; an FQDN is looked up first.
func nodePath(ctx context.Context, c *apiClient, ref string) (string, error) {
	if !isNodeID(ref) {
		id, err := nodeIDByFQDN(ctx, c, ref)
		if err != nil {
			return "", err
		}
		ref = id
	}
	return nodesPath + "/" + url.PathEscape(ref), nil
}

func renderNode(cmd *cobra.Command, body []byte, format string) error {
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	m, _ := v.(map[string]any)
	node, ok := m["node"]
	if !ok {
		return fmt.Errorf("unexpected answer: no node object")
	}
	return renderObject(cmd.OutOrStdout(), format, node, nodeColumns)
}

func nodePage(body []byte) ([]any, string, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, "", err
	}
	m, _ := v.(map[string]any)
	items, ok := m["nodes"].([]any)
	if !ok {
		return nil, "", fmt.Errorf("unexpected answer: no nodes list")
	}
	next := ""
	links, _ := m["nodes_links"].([]any)
	for _, l := range links {
		if lm, _ := l.(map[string]any); lm["rel"] == "next" {
			next, _ = lm["href"].(string)
		}
	}
	return items, next, nil
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
			q := url.Values{}
			if hostname != "" {
				q.Set("hostname", hostname)
			}
			if marker != "" {
				q.Set("marker", marker)
			}
			items, err := listItems(cmd.Context(), c, nodesPath, q, limit, nodePage)
			if err != nil {
				return err
			}
			return renderObjects(cmd.OutOrStdout(), format, items, nodeColumns)
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
			path, err := nodePath(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodGet, Path: path})
			if err != nil {
				return err
			}
			return renderNode(cmd, resp.Body, format)
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
			body := map[string]any{"fqdn": fqdn, "environment_id": env, "roles": roles, "traits": traits}
			if roles == nil {
				body["roles"] = []string{}
			}
			if traits == nil {
				body["traits"] = []string{}
			}
			if uuid != "" {
				body["uuid"] = uuid
			}
			if id > 0 {
				body["id"] = id
			}
			if levels != "" {
				placement, err := placementOf(levels)
				if err != nil {
					return err
				}
				body["levels"] = placement
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: nodesPath, Body: body})
			if err != nil {
				return err
			}
			return renderNode(cmd, resp.Body, format)
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
			body := map[string]any{}
			for flag, field := range map[string]string{"status": "status", "reason": "disabled_reason", "fqdn": "fqdn", "env": "environment_id"} {
				if flags.Changed(flag) {
					v, _ := flags.GetString(flag)
					body[field] = v
				}
			}
			if flags.Changed("maintenance") {
				body["maintenance"] = maintenance
			}
			if flags.Changed("roles") {
				body["roles"] = append([]string{}, roles...)
			}
			if flags.Changed("traits") {
				body["traits"] = append([]string{}, traits...)
			}
			if flags.Changed("levels") {
				placement, err := placementOf(levels)
				if err != nil {
					return err
				}
				body["levels"] = placement
			}
			if len(body) == 0 {
				return usagef("nothing to change: give at least one of --status, --reason, --maintenance, --levels, --roles, --traits, --fqdn, --env")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			path, err := nodePath(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPut, Path: path, Body: body})
			if err != nil {
				return err
			}
			return renderNode(cmd, resp.Body, format)
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
			c = c.withDefaultVersion(deployStepsVersion)
			path, err := nodePath(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: path + "/deploy_steps",
				Body: map[string]any{"instance_traits": append([]string{}, traits...)}})
			if err != nil {
				return err
			}
			v, err := decodeJSON(resp.Body)
			if err != nil {
				return err
			}
			m, _ := v.(map[string]any)
			steps, ok := m["deploy_steps"].([]any)
			if !ok {
				return fmt.Errorf("unexpected answer: no deploy_steps list")
			}
			return renderObjects(cmd.OutOrStdout(), format, steps, []string{"priority", "interface", "step", "args"})
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
	placement := make(map[string]string, len(pairs))
	for _, p := range pairs {
		placement[p.Name] = p.Value
	}
	return placement, nil
}
