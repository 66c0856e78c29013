package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

const templatesPath = "/api/v1/deploy_templates"

// templateFields are what `template show` prints in table form.
var templateFields = []string{"uuid", "name", "steps", "extra", "created_at", "updated_at"}

// templatesVersion is the microversion template commands ask for unless
// --api-version says otherwise: deploy templates exist from 1.1.
const templatesVersion = "latest"

// withDefaultVersion returns a copy of c that asks for microversion v unless
// the user chose one with --api-version.
func (c *apiClient) withDefaultVersion(v string) *apiClient {
	out := *c
	if out.opts.apiVersion == "" {
		out.opts.apiVersion = v
	}
	return &out
}

func templatesClient() (*apiClient, error) {
	c, err := newAPIClient()
	if err != nil {
		return nil, err
	}
	return c.withDefaultVersion(templatesVersion), nil
}

func templatePath(ident string) string { return templatesPath + "/" + url.PathEscape(ident) }

func newTemplateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "template",
		Short: "Manage deploy templates (a trait name mapped to deploy steps)",
		Long: `Manage deploy templates (spec 003). A template is named by a trait
(CUSTOM_... or a standard trait); a UUID or the name identifies it.
--steps takes a JSON list of steps {interface, step, args, priority}: inline,
from a file, or - for standard input.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newTemplateListCmd(), newTemplateShowCmd(), newTemplateCreateCmd(), newTemplateSetCmd(), newTemplateDeleteCmd())
	return cmd
}

// readSteps reads the --steps argument: "-" is standard input, a value that
// starts with "[" is the JSON itself, anything else a file name.
func readSteps(cmd *cobra.Command, arg string) (any, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case arg == "-":
		data, err = io.ReadAll(cmd.InOrStdin())
	case strings.HasPrefix(strings.TrimSpace(arg), "["):
		data = []byte(arg)
	default:
		data, err = os.ReadFile(arg)
	}
	if err != nil {
		return nil, fmt.Errorf("read --steps: %w", err)
	}
	steps, err := decodeJSON(data)
	if err != nil {
		return nil, usagef("--steps: %v", err)
	}
	if _, ok := steps.([]any); !ok {
		return nil, usagef("--steps must be a JSON list of steps")
	}
	return steps, nil
}

// stepsCell renders steps compactly for tables: "raid.create_configuration:10,...".
func stepsCell(v any) string {
	steps, _ := v.([]any)
	parts := make([]string, 0, len(steps))
	for _, s := range steps {
		m, _ := s.(map[string]any)
		parts = append(parts, fmt.Sprintf("%s.%s:%s", cell(m["interface"]), cell(m["step"]), cell(m["priority"])))
	}
	return strings.Join(parts, ",")
}

// forTable replaces a template's steps with their compact form.
func forTable(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(m)
	if steps, ok := m["steps"]; ok {
		out["steps"] = stepsCell(steps)
	}
	return out
}

func renderTemplate(cmd *cobra.Command, body []byte, format string) error {
	v, err := decodeJSON(body)
	if err != nil {
		return err
	}
	if format == formatTable {
		v = forTable(v)
	}
	return renderObject(cmd.OutOrStdout(), format, v, templateFields)
}

// listItems returns the items of one page of at most limit items when limit
// > 0, else of every page, following "next" links. page decodes one answer
// into its items and next link.
func listItems(ctx context.Context, c *apiClient, path string, query url.Values, limit int, page func([]byte) ([]any, string, error)) ([]any, error) {
	if limit > 0 {
		query.Set("limit", strconv.Itoa(limit))
	}
	var all []any
	for {
		resp, err := c.do(ctx, request{Method: http.MethodGet, Path: path, Query: query})
		if err != nil {
			return nil, err
		}
		items, next, err := page(resp.Body)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if limit > 0 || next == "" || len(items) == 0 {
			return all, nil
		}
		u, err := url.Parse(next)
		if err != nil {
			return nil, fmt.Errorf("unexpected next link %q: %w", next, err)
		}
		path, query = u.EscapedPath(), u.Query()
	}
}

func templatePage(body []byte) ([]any, string, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, "", err
	}
	m, _ := v.(map[string]any)
	items, ok := m["deploy_templates"].([]any)
	if !ok {
		return nil, "", fmt.Errorf("unexpected answer: no deploy_templates list")
	}
	next, _ := m["next"].(string)
	return items, next, nil
}

func newTemplateListCmd() *cobra.Command {
	var (
		detail           bool
		fields           []string
		sortKey, sortDir string
		limit            int
		marker, format   string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List deploy templates (every page unless --limit is given)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if detail && len(fields) > 0 {
				return usagef("--detail and --fields go separately")
			}
			c, err := templatesClient()
			if err != nil {
				return err
			}
			q := url.Values{}
			if detail {
				q.Set("detail", "true")
			}
			if len(fields) > 0 {
				q.Set("fields", strings.Join(fields, ","))
			}
			for name, v := range map[string]string{"sort_key": sortKey, "sort_dir": sortDir, "marker": marker} {
				if v != "" {
					q.Set(name, v)
				}
			}
			items, err := listItems(cmd.Context(), c, templatesPath, q, limit, templatePage)
			if err != nil {
				return err
			}
			columns := []string{"uuid", "name"}
			switch {
			case detail:
				columns = templateFields
			case len(fields) > 0:
				columns = fields
			}
			if format == formatTable {
				for i := range items {
					items[i] = forTable(items[i])
				}
			}
			return renderObjects(cmd.OutOrStdout(), format, items, columns)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&detail, "detail", false, "show every attribute")
	f.StringSliceVar(&fields, "fields", nil, "attributes to show, e.g. name,steps")
	f.StringVar(&sortKey, "sort-key", "", "sort by name, uuid, created_at or updated_at (default: creation order)")
	f.StringVar(&sortDir, "sort-dir", "", "asc or desc")
	f.IntVar(&limit, "limit", 0, "show one page of at most this many templates")
	f.StringVar(&marker, "marker", "", "UUID of the template after which the listing starts")
	addListFormat(cmd, &format)
	return cmd
}

func newTemplateShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show UUID|NAME",
		Short: "Show a deploy template (password-like step arguments are masked)",
		Args:  exactArgs("UUID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := templatesClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodGet, Path: templatePath(args[0])})
			if err != nil {
				return err
			}
			return renderTemplate(cmd, resp.Body, format)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newTemplateCreateCmd() *cobra.Command {
	var name, stepsArg, uuid, format string
	cmd := &cobra.Command{
		Use:   "create --name TRAIT --steps JSON|FILE|- [--uuid UUID]",
		Short: "Create a deploy template",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || stepsArg == "" {
				return usagef("--name and --steps are required")
			}
			steps, err := readSteps(cmd, stepsArg)
			if err != nil {
				return err
			}
			body := map[string]any{"name": name, "steps": steps}
			if uuid != "" {
				body["uuid"] = uuid
			}
			c, err := templatesClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: templatesPath, Body: body})
			if err != nil {
				return err
			}
			return renderTemplate(cmd, resp.Body, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "trait name of the template, e.g. CUSTOM_RAID_MIRROR (required)")
	f.StringVar(&stepsArg, "steps", "", "deploy steps as JSON, a file holding it, or - for standard input (required)")
	f.StringVar(&uuid, "uuid", "", "UUID to give the template (default: generated)")
	addListFormat(cmd, &format)
	return cmd
}

func newTemplateSetCmd() *cobra.Command {
	var name, stepsArg, format string
	cmd := &cobra.Command{
		Use:   "set UUID|NAME [--name TRAIT] [--steps JSON|FILE|-]",
		Short: "Rename a deploy template or replace its steps",
		Args:  exactArgs("UUID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ops []map[string]any
			if name != "" {
				ops = append(ops, map[string]any{"op": "replace", "path": "/name", "value": name})
			}
			if stepsArg != "" {
				steps, err := readSteps(cmd, stepsArg)
				if err != nil {
					return err
				}
				ops = append(ops, map[string]any{"op": "replace", "path": "/steps", "value": steps})
			}
			if len(ops) == 0 {
				return usagef("nothing to change: give --name and/or --steps")
			}
			c, err := templatesClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPatch, Path: templatePath(args[0]), Body: ops,
				Header: http.Header{"Content-Type": {"application/json-patch+json"}}})
			if err != nil {
				return err
			}
			return renderTemplate(cmd, resp.Body, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "new trait name")
	f.StringVar(&stepsArg, "steps", "", "new deploy steps as JSON, a file holding it, or - for standard input")
	addListFormat(cmd, &format)
	return cmd
}

func newTemplateDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete UUID|NAME...",
		Short: "Delete deploy templates",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("want at least one UUID|NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := templatesClient()
			if err != nil {
				return err
			}
			for _, ident := range args {
				if _, err := c.do(cmd.Context(), request{Method: http.MethodDelete, Path: templatePath(ident)}); err != nil {
					return fmt.Errorf("delete %s: %w", ident, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted deploy template %s\n", ident)
			}
			return nil
		},
	}
}
