package main

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

var defColumns = []string{"id", "name", "component_id", "content"}

func newDefCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "def",
		Short: "Manage resource definitions (data sources)",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newDefCreateCmd(), newDefListCmd(), newDefShowCmd(), newDefUpdateCmd(), newDefDeleteCmd())
	return cmd
}

// defContent reads --content, or stdin when --content is "-", in format, as JSON.
func defContent(cmd *cobra.Command, content, format string) (json.RawMessage, error) {
	data := []byte(content)
	if content == "-" {
		var err error
		if data, err = io.ReadAll(cmd.InOrStdin()); err != nil {
			return nil, err
		}
	}
	v, err := parseDocument(data, format)
	if err != nil {
		return nil, usagef("--content: %v", err)
	}
	return canonicalJSON(v)
}

func newDefCreateCmd() *cobra.Command {
	var (
		name, component, content string
		inFormat, format         string
	)
	cmd := &cobra.Command{
		Use:   "create --name NAME [--component ID] [--content DOC|-] [--content-format json|yaml]",
		Short: "Create a resource definition, in a component or unattached",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usagef("--name is required")
			}
			in := client.NewResourceDefinition{Name: name}
			if component != "" {
				ref := client.ID(strings.TrimSpace(component))
				in.ComponentID = &ref
			}
			if cmd.Flags().Changed("content") {
				v, err := defContent(cmd, content, inFormat)
				if err != nil {
					return err
				}
				in.Content = v
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			def, err := c.CreateResourceDefinition(cmd.Context(), in)
			if err != nil {
				return err
			}
			return renderObject(cmd.OutOrStdout(), format, toObject(def), defColumns)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&name, "name", "n", "", "definition (data source) name, may contain '/' (required)")
	f.StringVarP(&component, "component", "i", "", "id of the component it belongs to")
	f.StringVar(&content, "content", "", "the definition's content document, or - to read it from stdin")
	f.StringVar(&inFormat, "content-format", formatJSON, "format of --content: json or yaml")
	addListFormat(cmd, &format)
	return cmd
}

func newDefListCmd() *cobra.Command {
	var (
		component string
		format    string
	)
	cmd := &cobra.Command{
		Use:   "list [--component ID]",
		Short: "List resource definitions, optionally of one component",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var of *string
			if cmd.Flags().Changed("component") {
				of = &component
			}
			return listObjects(cmd, format, defColumns, func(c *client.Client) (any, error) { return c.ResourceDefinitions(cmd.Context(), of) })
		},
	}
	cmd.Flags().StringVarP(&component, "component", "i", "", "component id; empty lists definitions attached to no component")
	addListFormat(cmd, &format)
	return cmd
}

func newDefShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a resource definition",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showObject(cmd, format, defColumns, func(c *client.Client) (any, error) { return c.ResourceDefinition(cmd.Context(), args[0]) })
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newDefUpdateCmd() *cobra.Command {
	var name, component, content, inFormat string
	cmd := &cobra.Command{
		Use:   "update ID [--name NAME] [--component ID] [--content DOC|-]",
		Short: "Change a resource definition's name, component or content",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in client.ResourceDefinitionUpdate
			if cmd.Flags().Changed("name") {
				in.Name = &name
			}
			if cmd.Flags().Changed("component") {
				ref := client.ID(strings.TrimSpace(component))
				in.ComponentID = &ref
			}
			if cmd.Flags().Changed("content") {
				v, err := defContent(cmd, content, inFormat)
				if err != nil {
					return err
				}
				in.Content = v
			}
			if in.Name == nil && in.ComponentID == nil && in.Content == nil {
				return usagef("nothing to update: give --name, --component and/or --content")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			return c.UpdateResourceDefinition(cmd.Context(), args[0], in)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&name, "name", "n", "", "new name")
	f.StringVarP(&component, "component", "i", "", "id of the component to move it to")
	f.StringVar(&content, "content", "", "new content document, or - to read it from stdin")
	f.StringVar(&inFormat, "content-format", formatJSON, "format of --content: json or yaml")
	return cmd
}

func newDefDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a resource definition",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, "resource_definitions/"+url.PathEscape(args[0]), func(c *client.Client) error { return c.DeleteResourceDefinition(cmd.Context(), args[0]) })
		},
	}
}
