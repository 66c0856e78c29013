package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

var defColumns = []string{"id", "name", "component_id", "content"}

func defPath(id string) string { return configBase + "/resource_definitions/" + url.PathEscape(id) }

func newDefCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "def",
		Short: "Manage resource definitions (data sources)",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newDefCreateCmd(), newDefListCmd(), newDefShowCmd(), newDefUpdateCmd(), newDefDeleteCmd())
	return cmd
}

// defContent reads --content, or stdin when --content is "-", in format.
func defContent(cmd *cobra.Command, content, format string) (any, error) {
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
	return v, nil
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
			body := map[string]any{"name": name}
			if component != "" {
				body["component_id"] = refValue(strings.TrimSpace(component))
			}
			if cmd.Flags().Changed("content") {
				v, err := defContent(cmd, content, inFormat)
				if err != nil {
					return err
				}
				body["content"] = v
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: configBase + "/resource_definitions", Body: body})
			if err != nil {
				return err
			}
			return renderAnswer(cmd, resp.Body, format, defColumns)
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
			var q url.Values
			if cmd.Flags().Changed("component") {
				q = url.Values{"component_id": {component}}
			}
			return listObjects(cmd, configBase+"/resource_definitions", q, format, defColumns)
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
			return showObject(cmd, defPath(args[0]), format, defColumns)
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
			body := map[string]any{}
			if cmd.Flags().Changed("name") {
				body["name"] = name
			}
			if cmd.Flags().Changed("component") {
				body["component_id"] = refValue(strings.TrimSpace(component))
			}
			if cmd.Flags().Changed("content") {
				v, err := defContent(cmd, content, inFormat)
				if err != nil {
					return err
				}
				body["content"] = v
			}
			if len(body) == 0 {
				return usagef("nothing to update: give --name, --component and/or --content")
			}
			return patchObject(cmd, defPath(args[0]), body)
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
			return deleteObject(cmd, defPath(args[0]))
		},
	}
}
