package main

import (
	"maps"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

var compColumns = []string{"id", "name", "resource_definitions"}

func newCompCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "comp",
		Short: "Manage components (groups of resource definitions)",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newCompCreateCmd(), newCompListCmd(), newCompShowCmd(), newCompUpdateCmd(), newCompDeleteCmd())
	return cmd
}

// compObject shows a component's definitions by name in tables.
func compObject(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	defs, _ := m["resource_definitions"].([]any)
	names := make([]any, 0, len(defs))
	for _, d := range defs {
		if dm, ok := d.(map[string]any); ok {
			names = append(names, dm["name"])
		}
	}
	out := maps.Clone(m)
	out["resource_definitions"] = names
	return out
}

func newCompCreateCmd() *cobra.Command {
	var (
		name   string
		defs   []string
		format string
	)
	cmd := &cobra.Command{
		Use:   "create --name NAME [--definition NAME ...]",
		Short: "Create a component, with resource definitions created along with it",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usagef("--name is required")
			}
			in := client.NewComponent{Name: name, ResourceDefinitions: []client.NewResourceDefinition{}}
			for _, d := range defs {
				in.ResourceDefinitions = append(in.ResourceDefinitions, client.NewResourceDefinition{Name: d})
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			comp, err := c.CreateComponent(cmd.Context(), in)
			if err != nil {
				return err
			}
			return renderComponent(cmd, comp, format)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&name, "name", "n", "", "component name (required)")
	f.StringArrayVarP(&defs, "definition", "d", nil, "name of a resource definition to create in it (repeatable), e.g. astute")
	addListFormat(cmd, &format)
	return cmd
}

func renderComponent(cmd *cobra.Command, comp *client.Component, format string) error {
	v := toObject(comp)
	if format == formatTable {
		v = compObject(v)
	}
	return renderObject(cmd.OutOrStdout(), format, v, compColumns)
}

func newCompListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List components",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			comps, err := c.Components(cmd.Context())
			if err != nil {
				return err
			}
			list := toObjects(comps)
			if format == formatTable {
				for i := range list {
					list[i] = compObject(list[i])
				}
			}
			return renderObjects(cmd.OutOrStdout(), format, list, compColumns)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newCompShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID|NAME",
		Short: "Show a component and its resource definitions",
		Args:  exactArgs("ID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			ref, err := c.Ref(cmd.Context(), client.KindComponent, args[0])
			if err != nil {
				return err
			}
			comp, err := c.Component(cmd.Context(), ref)
			if err != nil {
				return err
			}
			return renderComponent(cmd, comp, format)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newCompUpdateCmd() *cobra.Command {
	var (
		name string
		defs string
	)
	cmd := &cobra.Command{
		Use:   "update ID|NAME [--name NAME] [--definitions ID,...]",
		Short: "Rename a component or set exactly which resource definitions it has",
		Args:  exactArgs("ID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in client.ComponentUpdate
			if cmd.Flags().Changed("name") {
				in.Name = &name
			}
			if cmd.Flags().Changed("definitions") {
				refs := refList(defs)
				resdefs := make([]client.IDObject, len(refs))
				for i, r := range refs {
					resdefs[i] = client.IDObject{ID: r}
				}
				in.ResourceDefinitions = &resdefs
			}
			if in == (client.ComponentUpdate{}) {
				return usagef("nothing to update: give --name and/or --definitions")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			ref, err := c.Ref(cmd.Context(), client.KindComponent, args[0])
			if err != nil {
				return err
			}
			return c.UpdateComponent(cmd.Context(), ref, in)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&name, "name", "n", "", "new name")
	f.StringVar(&defs, "definitions", "", "resource definition ids the component has, comma-separated")
	return cmd
}

func newCompDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID|NAME",
		Short: "Delete a component and its resource definitions",
		Args:  exactArgs("ID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, "components/"+url.PathEscape(args[0]), func(c *client.Client) error {
				ref, err := c.Ref(cmd.Context(), client.KindComponent, args[0])
				if err != nil {
					return err
				}
				return c.DeleteComponent(cmd.Context(), ref)
			})
		},
	}
}
