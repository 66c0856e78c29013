package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

var envColumns = []string{"id", "components", "hierarchy_levels"}

func envPath(id string) string { return configBase + "/environments/" + url.PathEscape(id) }

func newEnvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Manage ConfigDB environments (components and ordered hierarchy levels)",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newEnvCreateCmd(), newEnvListCmd(), newEnvShowCmd(), newEnvUpdateCmd(), newEnvDeleteCmd())
	return cmd
}

// refList turns "1,fuel,3" into JSON values: integer ids as numbers, names as strings.
func refList(s string) []any {
	out := []any{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part != "" {
			out = append(out, refValue(part))
		}
	}
	return out
}

// refValue is an entity reference as JSON: an integer id as a number, a name or UUID as a string.
func refValue(s string) any {
	if isIntegerID(s) {
		return json.Number(s)
	}
	return s
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
			body := map[string]any{"components": refList(components), "hierarchy_levels": nameList(levels)}
			if id > 0 {
				body["id"] = id
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: configBase + "/environments", Body: body})
			if err != nil {
				return err
			}
			return renderAnswer(cmd, resp.Body, format, envColumns)
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
			return listObjects(cmd, configBase+"/environments", nil, format, envColumns)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newEnvShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an environment",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showObject(cmd, envPath(args[0]), format, envColumns)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newEnvUpdateCmd() *cobra.Command {
	var components, levels string
	cmd := &cobra.Command{
		Use:   "update ID [--components ID|NAME,...] [--levels LEVEL,...]",
		Short: "Change an environment's components or hierarchy levels",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			if cmd.Flags().Changed("components") {
				body["components"] = refList(components)
			}
			if cmd.Flags().Changed("levels") {
				body["hierarchy_levels"] = nameList(levels)
			}
			if len(body) == 0 {
				return usagef("nothing to update: give --components and/or --levels")
			}
			return patchObject(cmd, envPath(args[0]), body)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&components, "components", "c", "", "the environment's components by id or name, comma-separated")
	f.StringVarP(&levels, "levels", "l", "", "hierarchy level names, least specific first")
	return cmd
}

func newEnvDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete an environment and its documents",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, envPath(args[0]))
		},
	}
}

// listObjects GETs a JSON list and prints it.
func listObjects(cmd *cobra.Command, path string, query url.Values, format string, columns []string) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	resp, err := c.do(cmd.Context(), request{Method: http.MethodGet, Path: path, Query: query})
	if err != nil {
		return err
	}
	list, err := listOf(resp.Body)
	if err != nil {
		return err
	}
	return renderObjects(cmd.OutOrStdout(), format, list, columns)
}

// showObject GETs one object and prints it.
func showObject(cmd *cobra.Command, path, format string, fields []string) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	resp, err := c.do(cmd.Context(), request{Method: http.MethodGet, Path: path})
	if err != nil {
		return err
	}
	return renderAnswer(cmd, resp.Body, format, fields)
}

// renderAnswer prints an object the API answered with.
func renderAnswer(cmd *cobra.Command, body []byte, format string, fields []string) error {
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	return renderObject(cmd.OutOrStdout(), format, v, fields)
}

// patchObject sends a partial update.
func patchObject(cmd *cobra.Command, path string, body any) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	_, err = c.do(cmd.Context(), request{Method: http.MethodPatch, Path: path, Body: body})
	return err
}

// deleteObject deletes and confirms.
func deleteObject(cmd *cobra.Command, path string) error {
	c, err := newAPIClient()
	if err != nil {
		return err
	}
	if _, err := c.do(cmd.Context(), request{Method: http.MethodDelete, Path: path}); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", strings.TrimPrefix(path, configBase+"/"))
	return err
}
