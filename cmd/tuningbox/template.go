package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// templateFields are what `template show` prints in table form.
var templateFields = []string{"uuid", "name", "steps", "extra", "created_at", "updated_at"}

// templatesVersion is the microversion template commands ask for unless
// --api-version says otherwise: deploy templates exist from 1.1.
const templatesVersion = "latest"

func templatesClient() (*client.Client, error) {
	c, err := newAPIClient()
	if err != nil {
		return nil, err
	}
	return withDefaultVersion(c, templatesVersion), nil
}

func newTemplateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "template",
		Short: "Manage deploy templates (a trait name mapped to deploy steps)",
		Long: `Manage deploy templates. A template is named by a trait
(CUSTOM_... or a standard trait); a UUID or the name identifies it.
--steps takes a JSON list of steps {interface, step, args, priority}: inline,
from a file, or - for standard input.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newTemplateListCmd(), newTemplateShowCmd(), newTemplateCreateCmd(), newTemplateSetCmd(), newTemplateDeleteCmd(), newTemplateDefaultsCmd())
	return cmd
}

// readSteps reads the --steps argument: "-" is standard input, a value that
// starts with "[" is the JSON itself, anything else a file name.
func readSteps(cmd *cobra.Command, arg string) (json.RawMessage, error) {
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
	return canonicalJSON(steps)
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

func renderTemplate(cmd *cobra.Command, t *client.Template, format string) error {
	v := toObject(t)
	if format == formatTable {
		v = forTable(v)
	}
	return renderObject(cmd.OutOrStdout(), format, v, templateFields)
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
			found, err := c.Templates(cmd.Context(), client.TemplateQuery{Detail: detail, Fields: fields, SortKey: sortKey, SortDir: sortDir, Limit: limit, Marker: marker})
			if err != nil {
				return err
			}
			items := toObjects(found)
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
			t, err := c.Template(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return renderTemplate(cmd, t, format)
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
			c, err := templatesClient()
			if err != nil {
				return err
			}
			t, err := c.CreateTemplate(cmd.Context(), client.NewTemplate{Name: name, Steps: steps, UUID: uuid})
			if err != nil {
				return err
			}
			return renderTemplate(cmd, t, format)
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
			var ops []client.PatchOp
			if name != "" {
				ops = append(ops, client.PatchOp{Op: "replace", Path: "/name", Value: name})
			}
			if stepsArg != "" {
				steps, err := readSteps(cmd, stepsArg)
				if err != nil {
					return err
				}
				ops = append(ops, client.PatchOp{Op: "replace", Path: "/steps", Value: steps})
			}
			if len(ops) == 0 {
				return usagef("nothing to change: give --name and/or --steps")
			}
			c, err := templatesClient()
			if err != nil {
				return err
			}
			t, err := c.PatchTemplate(cmd.Context(), args[0], ops)
			if err != nil {
				return err
			}
			return renderTemplate(cmd, t, format)
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
				if err := c.DeleteTemplate(cmd.Context(), ident); err != nil {
					return fmt.Errorf("delete %s: %w", ident, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted deploy template %s\n", ident)
			}
			return nil
		},
	}
}

// defaultsColumns are what `template defaults` prints in table form: the steps.
var defaultsColumns = []string{"priority", "interface", "step", "args"}

func newTemplateDefaultsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "defaults",
		Short: "Show, set or delete an environment's default deploy steps (the steps templates override)",
	}
	cmd.SetFlagErrorFunc(flagError)
	var env string
	cmd.PersistentFlags().StringVarP(&env, "env", "e", "", "environment id or UUID (required)")
	// connect builds the client and names the environment as its microversion takes it.
	connect := func(cmd *cobra.Command) (*client.Client, string, error) {
		if env == "" {
			return nil, "", usagef("--env is required")
		}
		c, err := templatesClient()
		if err != nil {
			return nil, "", err
		}
		ref, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
		return c, ref, err
	}
	render := func(cmd *cobra.Command, d *client.StepDefaults, format string) error {
		if format == formatTable {
			return renderObjects(cmd.OutOrStdout(), format, toObjects(d.Steps), defaultsColumns)
		}
		return renderObject(cmd.OutOrStdout(), format, toObject(d), nil)
	}

	var showFormat string
	show := &cobra.Command{
		Use:   "show -e ENV",
		Short: "Show an environment's default deploy steps",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ref, err := connect(cmd)
			if err != nil {
				return err
			}
			d, err := c.StepDefaults(cmd.Context(), ref)
			if err != nil {
				return err
			}
			return render(cmd, d, showFormat)
		},
	}
	addListFormat(show, &showFormat)

	var stepsArg, setFormat string
	set := &cobra.Command{
		Use:   "set -e ENV --steps JSON|FILE|-",
		Short: "Replace an environment's default deploy steps",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stepsArg == "" {
				return usagef("--steps is required")
			}
			steps, err := readSteps(cmd, stepsArg)
			if err != nil {
				return err
			}
			c, ref, err := connect(cmd)
			if err != nil {
				return err
			}
			d, err := c.SetStepDefaults(cmd.Context(), ref, steps)
			if err != nil {
				return err
			}
			return render(cmd, d, setFormat)
		},
	}
	set.Flags().StringVar(&stepsArg, "steps", "", "deploy steps as JSON, a file holding it, or - for standard input (required)")
	addListFormat(set, &setFormat)

	del := &cobra.Command{
		Use:   "delete -e ENV",
		Short: "Delete an environment's default deploy steps",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ref, err := connect(cmd)
			if err != nil {
				return err
			}
			if err := c.DeleteStepDefaults(cmd.Context(), ref); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted the default deploy steps of environment %s\n", env)
			return err
		},
	}
	cmd.AddCommand(show, set, del)
	return cmd
}
